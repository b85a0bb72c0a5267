"""Argument-driven sizes, fuzzed: every operator whose output size comes from an argument, given
extents at the edges of 32- and 64-bit arithmetic, either runs or raises a ValueError/TypeError
(or MemoryError past the host cap) that names the operator. Nothing hangs, crashes or allocates
what it cannot hold.

The cases run in a child process (a crash or hang there fails the test instead of killing
pytest), from a fixed seed so that a failure replays: the message names the case.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

# Extents at the edges: signed and unsigned 32/64-bit limits, and the products that wrap.
EDGES = [0, 1, 3, 2**31 - 1, 2**31, 2**32 + 1, 2**40, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64,
         2**65, -1, -(2**31), -(2**63)]

# name -> Python source of a graph using `s` (a list of extents); `img` is a small HWC uint8 node.
CASES = {
    "pad": "fn.pad(img, shape=s[:3], axes=(0, 1, 2))",
    "crop": "fn.crop(img, crop=s[:2], out_of_bounds_policy='pad')",
    "slice": "fn.slice(img, rel_start=(0, 0), shape=s[:2], axes=(0, 1), "
             "out_of_bounds_policy='pad')",
    "random.uniform": "fn.random.uniform(shape=s, dtype=types.UINT8)",
    "random.normal": "fn.random.normal(shape=s)",
    "random.coin_flip": "fn.random.coin_flip(shape=s)",
    "full": "fn.full(fn.constant(idata=1, dtype=types.UINT8), shape=s)",
    "zeros": "fn.zeros(shape=s, dtype=types.UINT8)",
    "ones": "fn.ones(shape=s, dtype=types.INT64)",
    "constant": "fn.constant(idata=[1], shape=s)",
    "reshape": "fn.reshape(img, shape=s)",
    "resize": "fn.resize(img, size=s[:2])",
    "one_hot": "fn.one_hot(fn.constant(idata=1), num_classes=s[0])",
    "expand_dims": "fn.expand_dims(img, axes=[0], new_axis_names='X')[s[0]:s[1]]",
}

CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import stoker
    from stoker import fn, pipeline_def, types
    stoker_errors = (ValueError, TypeError, MemoryError, IndexError)  # IndexError: subscripts
    results = []
    for name, src, s in json.loads(sys.argv[1]):
        @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
        def pipe():
            img = fn.external_source(
                source=lambda: [np.full((4, 5, 3), 7, np.uint8)] * 2, batch=True, layout="HWC")
            return eval(src)
        p = None
        try:
            p = pipe()
            p.run()
            results.append([name, s, "ok", ""])
        except stoker_errors as e:
            results.append([name, s, type(e).__name__, str(e)])
        p = None  # deleted at once: the next case starts with the memory back
    print(json.dumps(results))
""")


def _cases(seed, count):
    import random
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        name = rng.choice(sorted(CASES))
        ndim = rng.randint(1, 4)
        extents = [rng.choice(EDGES) for _ in range(ndim)]
        while len(extents) < 3:  # the 2-D and 3-D cases slice what they need
            extents.append(rng.choice([1, 2, 3]))
        out.append([name, CASES[name], extents])
    return out


@pytest.mark.parametrize("seed", range(6))
def test_edge_extents_never_crash_or_hang(seed):
    cases = _cases(seed, 40)
    env = dict(os.environ, STOKER_HOST_MEMORY_CAP=str(1 << 30))  # nothing real past 1 GiB
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cases)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, (
        f"seed {seed}: the child died with {proc.returncode} (a crash, not an error); its last "
        f"lines:\n{proc.stderr[-3000:]}")
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(results) == len(cases)
    for name, extents, kind, message in results:
        if kind == "ok":
            continue
        names = [f"fn.{name}"] + (["subscript", "fn.expand_dims"] if name == "expand_dims" else [])
        names += ["fn.constant"] if name in ("full", "one_hot") else []
        assert any(message.startswith(n) for n in names), (
            f"seed {seed}, fn.{name} with {extents}: {kind} does not name the operator: {message}")
        assert "Unable to cast" not in message and "incompatible" not in message, (
            f"seed {seed}, fn.{name} with {extents}: a raw binding error: {message}")
