"""Names the frames stackdump.c printed as 'lib.so(+0x1234)[0x...]', from the library's symbol
table (nm), and shortens the rest: python3 scripts/debug/resolve_stack.py < LOG."""
import bisect
import re
import subprocess
import sys

_tables = {}


def _symbols(lib):
    if lib not in _tables:
        rows = []
        # The full symbol table, else (a stripped library such as libnvjpeg) the dynamic one.
        for flags in (["-C", "--defined-only"], ["-C", "-D", "--defined-only"]):
            out = subprocess.run(["nm", *flags, lib], capture_output=True, text=True).stdout
            for line in out.splitlines():
                addr, kind, name = (line.split(" ", 2) + ["", ""])[:3]
                if kind in ("t", "T", "w", "W"):
                    try:
                        rows.append((int(addr, 16), name))
                    except ValueError:
                        pass
            if rows:
                break
        _tables[lib] = sorted(rows)
    return _tables[lib]


def main():
    frame = re.compile(r"(\S+)\(([^)+]*)\+0x([0-9a-f]+)\)")
    for line in sys.stdin:
        m = frame.match(line.strip())
        if not m:
            print(line.rstrip()[:200])
            continue
        lib, name, off = m.group(1), m.group(2), int(m.group(3), 16)
        if not name:
            rows = _symbols(lib)
            i = bisect.bisect_right(rows, (off, "\uffff")) - 1
            name = rows[i][1] if i >= 0 else "?"
        print(f"    {lib.rsplit('/', 1)[-1]}: {name[:160]}")


if __name__ == "__main__":
    main()
