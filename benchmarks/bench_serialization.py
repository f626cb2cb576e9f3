"""Checkpoints: save and load a 100 MB float32 state dict (tensorlib vs the reference
safetensors.numpy vs torch.save/torch.load).

The "numpy" column is the reference ``safetensors.numpy`` package (the same file format, written
by its Rust core); the "torch" column is ``torch.save`` / ``torch.load`` (pickle in a zip file;
``weights_only=True`` on load). tensorlib's ``save_file`` is timed as shipped (atomic rename and
two ``fsync`` calls, which neither reference makes) and once more without the ``fsync`` calls.

Peak memory is measured in a fresh subprocess per library and operation (Linux): the peak
resident set size during the call (``VmHWM``, reset through ``/proc/self/clear_refs`` just before)
minus the resident size just before it, in units of the 100 MB of data. Loading needs at least 1.0
(the result itself); saving can need 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _timing import best_of, torch

import tensorlib as tl
from tensorlib.serialization import load_file, save_file
from tensorlib.serialization import safetensors as st
from tensorlib.serialization.atomic import atomic_write

try:
    import safetensors.numpy as reference
except ImportError:  # pragma: no cover - the test extra installs it
    reference = None

TENSORS, ELEMENTS = 25, 1_000_000  # 25 tensors of 4 MB: 100 MB
MB = 1e6
REPEAT = 3

_CHILD = r'''
import os, sys
import numpy as np
which, op, path = sys.argv[1:4]
TENSORS, ELEMENTS = 25, 1_000_000

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

def arrays():
    return {f"layer{i}.weight": np.full(ELEMENTS, i, dtype=np.float32) for i in range(TENSORS)}

if which == "tensorlib":
    import tensorlib as tl
    from tensorlib.serialization import load_file, save_file
    data = {k: tl.from_numpy(v) for k, v in arrays().items()} if op == "save" else None
    run = (lambda: save_file(data, path)) if op == "save" else (lambda: load_file(path))
elif which == "reference":
    import safetensors.numpy as ref
    data = arrays() if op == "save" else None
    run = (lambda: ref.save_file(data, path)) if op == "save" else (lambda: ref.load_file(path))
else:
    import torch
    data = {k: torch.from_numpy(v) for k, v in arrays().items()} if op == "save" else None
    run = (
        (lambda: torch.save(data, path))
        if op == "save"
        else (lambda: torch.load(path, weights_only=True))
    )
def high_water_mark():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))

# reset the peak (ru_maxrss would be the parent's, kept across exec)
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = rss()
result = run()
print(max(high_water_mark() - before, 0))
'''


def _peak(which: str, op: str, path: str) -> float | None:
    """Extra peak memory of one call, in units of the data size, measured in a fresh process."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    try:
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, which, op, path],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout
    except subprocess.CalledProcessError:
        return None
    return int(out.split()[-1]) / (TENSORS * ELEMENTS * 4)


def run() -> list[dict]:
    arrays = {f"layer{i}.weight": np.full(ELEMENTS, i, dtype=np.float32) for i in range(TENSORS)}
    tensors = {name: tl.from_numpy(array) for name, array in arrays.items()}
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        ours, theirs, pt = (
            str(Path(scratch) / name) for name in ("ours.safetensors", "theirs.safetensors", "t.pt")
        )
        torch_state = (
            {k: torch.from_numpy(v) for k, v in arrays.items()} if torch is not None else None
        )
        rows.append(
            {
                "name": "save 100 MB (save_file, fsync'ed)",
                "tensorlib": best_of(lambda: save_file(tensors, ours), repeat=REPEAT),
                "numpy": best_of(lambda: reference.save_file(arrays, theirs), repeat=REPEAT)
                if reference
                else None,
                "torch": best_of(lambda: torch.save(torch_state, pt), repeat=REPEAT)
                if torch is not None
                else None,
            }
        )
        rows.append(
            {
                "name": "save 100 MB (no fsync)",
                "tensorlib": best_of(
                    lambda: atomic_write(ours, st._serialize(tensors, None), durable=False),
                    repeat=REPEAT,
                ),
                "numpy": rows[-1]["numpy"],
                "torch": rows[-1]["torch"],
            }
        )
        rows.append(
            {
                "name": "load 100 MB (load_file)",
                "tensorlib": best_of(lambda: load_file(ours), repeat=REPEAT),
                "numpy": best_of(lambda: reference.load_file(theirs), repeat=REPEAT)
                if reference
                else None,
                "torch": best_of(lambda: torch.load(pt, weights_only=True), repeat=REPEAT)
                if torch is not None
                else None,
            }
        )
        rows.append(
            {
                "name": "tl.save / tl.load round trip 100 MB",
                "tensorlib": best_of(
                    lambda: (tl.save({"model": tensors}, ours), tl.load(ours)), repeat=REPEAT
                ),
                "numpy": None,
                "torch": best_of(
                    lambda: (
                        torch.save({"model": torch_state}, pt),
                        torch.load(pt, weights_only=True),
                    ),
                    repeat=REPEAT,
                )
                if torch is not None
                else None,
            }
        )
        memory = {}
        for op in ("save", "load"):
            for which, path in (("tensorlib", ours), ("reference", theirs), ("torch", pt)):
                if (which == "reference" and reference is None) or (
                    which == "torch" and torch is None
                ):
                    memory[op, which] = None
                    continue
                memory[op, which] = _peak(which, op, path)
        rows[0].update(
            {f"peak_{w}": memory["save", w] for w in ("tensorlib", "reference", "torch")}
        )
        rows[2].update(
            {f"peak_{w}": memory["load", w] for w in ("tensorlib", "reference", "torch")}
        )
    print(
        "\npeak extra memory during the call, in units of the 100 MB of data (fresh process each):"
    )
    for op in ("save", "load"):
        cells = ", ".join(
            f"{w} {memory[op, w]:.2f}" if memory[op, w] is not None else f"{w} -"
            for w in ("tensorlib", "reference", "torch")
        )
        print(f"  {op}: {cells}")
    print(json.dumps({f"{op} {w}": v for (op, w), v in memory.items()}))
    return rows
