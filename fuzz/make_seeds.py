#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz harnesses at run time (nothing is stored in the repo).

    python3 fuzz/make_seeds.py TESTDATA OUT

OUT/<harness>/ gets: for the image harnesses, the shared test images (up to MAX_SEED bytes) each
behind a few parameter prefixes (see image_harness.h), plus small PNGs made here for what the
shared data lacks (Adam7 interlacing, 1/2/4-bit, tRNS, 16-bit, eXIf); for file_list, the shared
list files and a few made here; for sample_order, configurations for each mode.
"""
import os
import random
import struct
import sys
import zlib
from pathlib import Path

MAX_SEED = 256 * 1024  # larger files slow every mutation down, and their size is refused anyway

# Parameter prefixes (image_harness.h): full RGB decode; roi + strided + orientation; gray at
# scale 1/2 to 16-bit; BGR roi at 1/8, strided; ANY with a tiny max_pixels.
IMAGE_PREFIXES = [
    bytes([0x00, 0, 0, 255, 255, 0x00]),
    bytes([0xC4, 40, 60, 128, 100, 0x00]),
    bytes([0x2A, 0, 0, 255, 255, 0x00]),
    bytes([0xD9, 90, 20, 30, 200, 0x00]),
    bytes([0x07, 0, 0, 255, 255, 0x01]),
]


def files(root, patterns):
    out = []
    for pat in patterns:
        out += [p for p in sorted(root.glob(pat)) if p.is_file() and p.stat().st_size <= MAX_SEED]
    return out


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def make_png(rng, w, h, color_type, depth, interlace=False, plte=0, trns=None, exif=None):
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type]
    bits = channels * depth

    def rows(pw, ph):
        rb = (pw * bits + 7) // 8
        return b"".join(bytes([rng.randrange(5)]) + rng.randbytes(rb) for _ in range(ph))

    if interlace:
        raw = b""
        for xs, ys, dx, dy in [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
                               (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]:
            pw, ph = (w - xs + dx - 1) // dx, (h - ys + dy - 1) // dy
            if pw > 0 and ph > 0:
                raw += rows(pw, ph)
    else:
        raw = rows(w, h)
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, int(interlace)))
    if exif is not None:
        out += chunk(b"eXIf", exif)
    if plte:
        out += chunk(b"PLTE", rng.randbytes(3 * plte))
    if trns is not None:
        out += chunk(b"tRNS", trns)
    out += chunk(b"IDAT", zlib.compress(raw))
    out += chunk(b"IEND", b"")
    return out


def exif_orientation(value):
    # Big-endian TIFF header, one IFD entry: Orientation (0x0112), SHORT, count 1.
    return (b"MM\x00\x2a" + struct.pack(">I", 8) + struct.pack(">H", 1) +
            struct.pack(">HHIHH", 0x0112, 3, 1, value, 0) + struct.pack(">I", 0))


def made_pngs():
    rng = random.Random(7)
    return {
        "adam7_rgb8": make_png(rng, 13, 7, 2, 8, interlace=True),
        "adam7_graya16": make_png(rng, 9, 11, 4, 16, interlace=True),
        "adam7_gray2": make_png(rng, 6, 6, 0, 2, interlace=True),
        "gray1_trns": make_png(rng, 17, 5, 0, 1, trns=b"\x00\x01"),
        "palette4_trns": make_png(rng, 10, 10, 3, 4, plte=16, trns=bytes(range(0, 160, 10))),
        "adam7_palette8": make_png(rng, 12, 9, 3, 8, interlace=True, plte=256),
        "rgba8_exif6": make_png(rng, 8, 6, 6, 8, exif=exif_orientation(6)),
        "rgb16_trns": make_png(rng, 5, 3, 2, 16, trns=b"\x00\x01\x00\x02\x00\x03"),
        "gray8_exif3": make_png(rng, 7, 4, 0, 8, exif=exif_orientation(3)),
    }


def write(dir_, name, data):
    dir_.mkdir(parents=True, exist_ok=True)
    (dir_ / name).write_bytes(data)


def main():
    testdata, out = Path(sys.argv[1]), Path(sys.argv[2])
    img = testdata / "images"

    jpegs = files(img, ["jpeg_edge/**/*.jpg", "orientation/*.jpg"]) + files(testdata, ["fuzzing/jpeg/*"])
    for i, f in enumerate(jpegs):
        data = f.read_bytes()
        for k, pre in enumerate(IMAGE_PREFIXES):
            write(out / "jpeg", f"{i:03d}_{k}_{f.name}", pre + data)

    pngs = [(f.name, f.read_bytes()) for f in files(img, ["png/**/*.png", "jpeg_edge/reftest/**/*.png"])]
    pngs += [(n + ".png", d) for n, d in made_pngs().items()]
    for i, (name, data) in enumerate(pngs):
        for k, pre in enumerate(IMAGE_PREFIXES):
            # Half of them with the CRC fix-up on (p[5] bit 1), so mutations reach past the CRCs.
            pre = pre[:5] + bytes([pre[5] | (2 if k % 2 == 0 else 0)])
            write(out / "png", f"{i:03d}_{k}_{name}", pre + data)

    lists = [f.read_bytes() for f in files(testdata, ["fuzzing/*.txt", "coco/file_list.txt"])]
    lists += [b"a.jpg 0\nb c.jpg 12\n\n  d.png\t3  \r\n/abs/e.jpg 2147483647\n",
              b"only_a_path\n", b"x.jpg 2147483648\n", b"   \n\t\n", b"f.jpg 0"]
    for i, data in enumerate(lists):
        for opt in (0, 1, 3):
            write(out / "file_list", f"{i:02d}_{opt}", bytes([opt]) + data)

    rng = random.Random(11)
    for i in range(48):
        cfg = bytes(rng.randrange(256) for _ in range(6))
        mode = i % 3
        steps = rng.randrange(256)
        if mode == 2:
            body = bytes(rng.randrange(256) for _ in range(2 * rng.randrange(1, 4)))
        else:
            body = b"stoker.sample_order 1 cfg 10 0 1 1 0 1 7 524287 pos 1 0 1 0 0 0 -1 0 segs 1 0 1 buf 1 0"
        write(out / "sample_order", f"{i:02d}", cfg + bytes([mode, steps]) + body)


if __name__ == "__main__":
    main()
