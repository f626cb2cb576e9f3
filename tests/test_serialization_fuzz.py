"""Fuzzing the readers: mutated TLCKPT and safetensors files raise CheckpointError and change nothing.

``make test`` runs a few hundred mutants per format; ``make fuzz`` runs 10,000 per format
(``TENSORLIB_FUZZ_N=10000``) and prints the counts. Every mutant is loaded through the public
API into a live model (and optimizer and generator); the only exception allowed out is
``CheckpointError``, after which every parameter, optimizer state tensor and generator state
must be exactly as before. A load that takes more than 10 s counts as a hang.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.serialization import (
    CheckpointError,
    load_checkpoint,
    load_model,
    save_checkpoint,
    save_model,
)

N = int(os.environ.get("TENSORLIB_FUZZ_N", "300"))
HANG_SECONDS = 10
EDGE_U32 = [0, 1, 2, 3, 4, 7, 8, 255, 2**16, 2**31 - 1, 2**31, 2**32 - 1]
EDGE_U64 = EDGE_U32 + [2**32, 2**60, 2**63, 2**64 - 1]


class Hang(Exception):
    pass


def _on_alarm(signum, frame):
    raise Hang()


def _setup():
    model = nn.MLP(3, [4], 2, generator=tl.Generator(0))
    optimizer = tl.optim.AdamW(model.parameters(), lr=1e-2)
    x = tl.randn(5, 3, generator=tl.Generator(1))
    model(x).square().mean().backward()
    optimizer.step()
    optimizer.zero_grad()
    return model, optimizer, tl.Generator(7)


def _snapshot(model, optimizer, generator):
    return ({k: v.numpy().copy() for k, v in model.state_dict().items()}, optimizer.state_dict(),
            generator.get_state().numpy().copy())


def _unchanged(snapshot, model, optimizer, generator) -> bool:
    params, opt, gen = snapshot
    now = optimizer.state_dict()
    return (all(np.array_equal(v.numpy(), params[k]) for k, v in model.state_dict().items())
            and now["param_groups"] == opt["param_groups"] and now["state"].keys() == opt["state"].keys()
            and all(np.array_equal(t.numpy(), opt["state"][i][k].numpy()) for i, e in now["state"].items() for k, t in e.items())
            and np.array_equal(generator.get_state().numpy(), gen))


def _restore(snapshot, model, optimizer, generator):
    params, opt, gen = snapshot
    model.load_state_dict(params)
    optimizer.load_state_dict(opt)
    generator.set_state(gen)


# ---- where the integer fields of a TLCKPT file are (an independent walk of the specification) ----

def _tlckpt_fields(data: bytes):
    """(offset, size) of every u32/u64 field and (offset, length) of every name, walking the layout."""
    fields, names, at = [(8, 4), (12, 4), (16, 4)], [], 20
    count = struct.unpack_from("<I", data, 16)[0]
    sizes = {}
    for _ in range(count):
        n = struct.unpack_from("<I", data, at)[0]
        fields.append((at, 4))
        names.append((at + 4, n))
        name = data[at + 4: at + 4 + n]
        at += 4 + n
        ndim = struct.unpack_from("<I", data, at)[0]
        fields += [(at + 4 * i, 4) for i in range(ndim + 1)]
        at += 4 + 4 * ndim
        fields.append((at, 8))
        elements = struct.unpack_from("<Q", data, at)[0]
        sizes[name] = elements
        at += 8 + 4 * elements
    at += 24  # the AdamW configuration
    fields.append((at, 4))
    at += 4
    for _ in range(count):
        n = struct.unpack_from("<I", data, at)[0]
        fields.append((at, 4))
        names.append((at + 4, n))
        at += 4 + n
        fields += [(at, 8), (at + 8, 8)]
        elements = struct.unpack_from("<Q", data, at + 8)[0]
        at += 16 + 8 * elements
    return fields, names


def _common_mutation(data: bytes, rng) -> bytes:
    kind = rng.integers(4)
    if kind == 0:  # flip 1 to 8 random bits
        out = bytearray(data)
        for _ in range(rng.integers(1, 9)):
            out[rng.integers(len(out))] ^= 1 << int(rng.integers(8))
        return bytes(out)
    if kind == 1:  # truncate
        return data[: rng.integers(len(data))]
    if kind == 2:  # extend with junk (or zeros)
        extra = rng.bytes(int(rng.integers(1, 64)))
        return data + (extra if rng.random() < 0.5 else bytes(len(extra)))
    cut = int(rng.integers(len(data)))  # splice: delete or duplicate a random slice
    span = int(rng.integers(1, 32))
    return data[:cut] + data[cut + span:] if rng.random() < 0.5 else data[:cut] + data[cut: cut + span] + data[cut:]


def _tlckpt_mutation(data: bytes, fields, names, rng) -> bytes:
    if rng.random() < 0.4:
        return _common_mutation(data, rng)
    out = bytearray(data)
    if rng.random() < 0.75:  # edit a length, count, dim or step
        offset, size = fields[rng.integers(len(fields))]
        old = int.from_bytes(out[offset: offset + size], "little")
        choice = rng.integers(3)
        if choice == 0:  # off by a little
            value = old + int(rng.choice([-2, -1, 1, 2]))
        elif choice == 1:  # an edge value
            edges = EDGE_U64 if size == 8 else EDGE_U32
            value = edges[rng.integers(len(edges))]
        else:  # anything
            value = int.from_bytes(rng.bytes(size), "little")
        out[offset: offset + size] = (value % 2**(8 * size)).to_bytes(size, "little")
        return bytes(out)
    (a, la), (b, lb) = (names[i] for i in rng.choice(len(names), 2, replace=False))  # swap two names' bytes
    if la == lb:
        out[a: a + la], out[b: b + lb] = data[b: b + lb], data[a: a + la]
    else:  # different lengths: copy one name over the other's first bytes
        n = min(la, lb)
        out[a: a + n] = data[b: b + n]
    return bytes(out)


# ---- safetensors header mutations ----------------------------------------------------------------

JUNK = [None, True, -1, 0, 1, 2**31, 2**64, 2**70, 1.5, "x", "F32", [], [0], [0, 1, 2], {}, {"a": 1}, [-1, 4]]


def _mutate_entry(entry, rng):
    key = ["dtype", "shape", "data_offsets"][rng.integers(3)]
    choice = rng.integers(4)
    if choice == 0:
        entry[key] = JUNK[rng.integers(len(JUNK))]
    elif choice == 1 and key == "dtype":
        entry[key] = str(rng.choice(["F16", "F64", "I8", "U8", "BOOL", "BF16", "I64", "F8_E4M3", "f32", ""]))
    elif choice == 1 and isinstance(entry[key], list) and entry[key]:
        i = rng.integers(len(entry[key]))
        entry[key][i] = int(entry[key][i]) + [-8, -4, -1, 1, 4, 8, 2**40][rng.integers(7)] if isinstance(entry[key][i], int) else 0
    elif choice == 2:
        del entry[key]
    else:
        entry[str(rng.choice(["extra", "dtype2", "offsets"]))] = 0
    return entry


def _safetensors_mutation(data: bytes, rng) -> bytes:
    if rng.random() < 0.4:
        return _common_mutation(data, rng)
    n = int.from_bytes(data[:8], "little")
    header, body = json.loads(data[8: 8 + n]), data[8 + n:]
    names = [k for k in header if k != "__metadata__"]
    choice = rng.integers(8)
    if choice <= 2:
        name = names[rng.integers(len(names))]
        header[name] = _mutate_entry(dict(header[name]), rng)
    elif choice == 3 and len(names) >= 2:  # swap two tensors' entries (names now point at other data)
        a, b = rng.choice(names, 2, replace=False)
        header[a], header[b] = header[b], header[a]
    elif choice == 4:  # metadata: junk values, or a mutated structure
        meta = header.setdefault("__metadata__", {})
        key = str(rng.choice(list(meta) + ["tensorlib.structure", "head.weight", "x"]))
        text = meta.get(key, "")
        if rng.random() < 0.5 and text:
            i = int(rng.integers(len(text)))
            text = text[:i] + str(rng.choice(list('{}[]",:0123 abcdefhilnorstu'))) + text[i + 1:]
            meta[key] = text
        else:
            meta[key] = JUNK[rng.integers(len(JUNK))]
    elif choice == 5:  # drop or duplicate an entry
        name = names[rng.integers(len(names))]
        header[name + ("" if rng.random() < 0.5 else "'")] = header.pop(name)
        if rng.random() < 0.5:
            header[name] = header[name + "'"] if name + "'" in header else header[name]
    elif choice == 6:  # deep nesting or a huge header claim
        if rng.random() < 0.5:
            depth = int(rng.choice([4, 100, 5000]))
            raw = json.dumps(header).encode()
            raw = raw[:-1] + b',"deep":' + b"[" * depth + b"]" * depth + b"}"
            return len(raw).to_bytes(8, "little") + raw + body
        else:
            raw = json.dumps(header).encode()
            return EDGE_U64[rng.integers(len(EDGE_U64))].to_bytes(8, "little") + raw + body
    else:  # a duplicated key, textually
        raw = json.dumps(header).encode()
        dup = b'"%s":' % names[0].encode()
        first = raw.find(dup)
        raw = raw[:1] + raw[first: raw.find(b"}", first) + 1] + b"," + raw[1:]
        return len(raw).to_bytes(8, "little") + raw + body
    raw = json.dumps(header, ensure_ascii=rng.random() < 0.5).encode()
    raw += b" " * int(rng.integers(0, 8))
    return len(raw).to_bytes(8, "little") + raw + body


# ---- the harness --------------------------------------------------------------------------------

def fuzz(kind: str, count: int, directory: Path, seed: int = 0) -> Counter:
    """Load ``count`` mutants of one format; return the outcome counts; raise on any violation."""
    rng = np.random.default_rng(seed)
    model, optimizer, generator = _setup()
    base_path = directory / f"base-{kind}"
    if kind == "tlckpt":
        save_checkpoint(base_path, model, optimizer, generator)
    elif kind == "safetensors":
        save_model(model, base_path, metadata={"epoch": "3"})
    else:
        tl.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "rng": [generator.get_state()],
                 "step": 3, "note": "ünï"}, base_path)
    base = base_path.read_bytes()
    fields, names = _tlckpt_fields(base) if kind == "tlckpt" else (None, None)
    snapshot = _snapshot(model, optimizer, generator)
    outcomes: Counter = Counter()
    path = directory / f"mutant-{kind}"
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        for i in range(count):
            mutant = _tlckpt_mutation(base, fields, names, rng) if kind == "tlckpt" else _safetensors_mutation(base, rng)
            path.write_bytes(mutant)
            signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
            try:
                if kind == "tlckpt":
                    load_checkpoint(path, model, optimizer, generator)
                elif kind == "safetensors":
                    load_model(model, path)
                else:
                    tl.load(path)
                outcomes["loaded"] += 1
                _restore(snapshot, model, optimizer, generator)
            except CheckpointError:
                outcomes["rejected (CheckpointError)"] += 1
                if not _unchanged(snapshot, model, optimizer, generator):
                    (directory / f"partial-{kind}-{i}").write_bytes(mutant)
                    raise AssertionError(f"{kind} mutant {i} was rejected after a partial load") from None
            except Hang:
                (directory / f"hang-{kind}-{i}").write_bytes(mutant)
                raise AssertionError(f"{kind} mutant {i} took more than {HANG_SECONDS} s") from None
            except Exception as error:
                (directory / f"crash-{kind}-{i}").write_bytes(mutant)
                raise AssertionError(f"{kind} mutant {i} raised {type(error).__name__}: {error}") from error
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return outcomes


@pytest.mark.parametrize("kind", ["tlckpt", "safetensors", "tl.save"])
def test_fuzz(kind, tmp_path):
    outcomes = fuzz(kind, N, tmp_path, seed={"tlckpt": 1, "safetensors": 2, "tl.save": 3}[kind])
    print(f"\nfuzz {kind}: {N} mutants: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    assert sum(outcomes.values()) == N
    assert outcomes["rejected (CheckpointError)"] > N // 2  # the mutations do hit the validation


if __name__ == "__main__":  # python tests/test_serialization_fuzz.py 10000
    import tempfile

    count = int(sys.argv[1]) if len(sys.argv) > 1 else N
    with tempfile.TemporaryDirectory() as scratch:
        for kind in ("tlckpt", "safetensors", "tl.save"):
            print(kind, count, dict(fuzz(kind, count, Path(scratch))))
