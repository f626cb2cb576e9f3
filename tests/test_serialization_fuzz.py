"""Fuzzing the readers: mutated TLCKPT, safetensors and torch.save files raise CheckpointError and
change nothing.

``make test`` runs a few hundred mutants per format; ``make fuzz`` runs 10,000 per format
(``TENSORLIB_FUZZ_N=10000``) and prints the counts. Every mutant is loaded through the public
API into a live model (and optimizer and generator); the only exception allowed out is
``CheckpointError``, after which every parameter, optimizer state tensor and generator state
must be exactly as before. A load that takes more than 10 s counts as a hang, and one that
allocates more than ``MEMORY_BOUND`` bytes (traced by ``tracemalloc``) as unbounded memory.

Besides byte flips, truncations, extensions and splices, the mutations write header lengths
past the end of the file, duplicate JSON keys, non-UTF-8 headers, NaN, huge and negative
offsets, dtype strings that do not exist, shapes whose product overflows or with 65 dimensions,
overlapping tensors and zero-size tensors; a ``torch.save`` archive (written by PyTorch, so that
format is fuzzed only where torch is installed) gets damaged pickles (edited integers, globals
outside the allow-list, forbidden opcodes), short or long storages, dropped or compressed
members, and is re-zipped so that its CRCs are right again.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import sys
import tracemalloc
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
MEMORY_BOUND = 64 * 2**20  # bytes a reader may allocate for one mutant of a few kilobytes
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
    return (
        all(np.array_equal(v.numpy(), params[k]) for k, v in model.state_dict().items())
        and now["param_groups"] == opt["param_groups"]
        and now["state"].keys() == opt["state"].keys()
        and all(
            np.array_equal(t.numpy(), opt["state"][i][k].numpy())
            for i, e in now["state"].items()
            for k, t in e.items()
        )
        and np.array_equal(generator.get_state().numpy(), gen)
    )


def _restore(snapshot, model, optimizer, generator):
    params, opt, gen = snapshot
    model.load_state_dict(params)
    optimizer.load_state_dict(opt)
    generator.set_state(gen)


# ---- where the integer fields of a TLCKPT file are (an independent walk of the specification) ----

def _tlckpt_fields(data: bytes):
    """(offset, size) of every u32/u64 field and (offset, length) of every name, walking the
    layout."""
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
    return (
        data[:cut] + data[cut + span :]
        if rng.random() < 0.5
        else data[:cut] + data[cut : cut + span] + data[cut:]
    )


def _hostile_record(data: bytes, names, rng) -> bytes:
    """Replace the first parameter record by one whose shape cannot exist (65 dims, an overflowing
    product)."""
    dims = [
        [1] * 65,
        [0] * 65,
        [0, 2**32 - 1, 2**32 - 1, 2**32 - 1],
        [2**31, 2**31, 0],
        [2**32 - 1] * 3,
    ][rng.integers(5)]
    count = int(np.prod(dims, dtype=object)) % 2**64
    name_at, length = names[0]
    record = (
        struct.pack("<I", length)
        + data[name_at : name_at + length]
        + struct.pack(f"<I{len(dims)}IQ", len(dims), *dims, count)
    )
    return data[:20] + record + data[names[1][0] - 4:]


def _tlckpt_mutation(data: bytes, fields, names, rng) -> bytes:
    if rng.random() < 0.4:
        return _common_mutation(data, rng)
    if rng.random() < 0.1:
        return _hostile_record(data, names, rng)
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
    # swap two names' bytes
    (a, la), (b, lb) = (names[i] for i in rng.choice(len(names), 2, replace=False))
    if la == lb:
        out[a: a + la], out[b: b + lb] = data[b: b + lb], data[a: a + la]
    else:  # different lengths: copy one name over the other's first bytes
        n = min(la, lb)
        out[a: a + n] = data[b: b + n]
    return bytes(out)


# ---- safetensors header mutations ----------------------------------------------------------------

JUNK = [
    None,
    True,
    -1,
    0,
    1,
    2**31,
    2**64,
    2**70,
    1.5,
    "x",
    "F32",
    [],
    [0],
    [0, 1, 2],
    {},
    {"a": 1},
    [-1, 4],
]


def _mutate_entry(entry, rng):
    key = ["dtype", "shape", "data_offsets"][rng.integers(3)]
    choice = rng.integers(4)
    if choice == 0:
        entry[key] = JUNK[rng.integers(len(JUNK))]
    elif choice == 1 and key == "dtype":
        entry[key] = str(
            rng.choice(["F16", "F64", "I8", "U8", "BOOL", "BF16", "I64", "F8_E4M3", "f32", ""])
        )
    elif choice == 1 and isinstance(entry[key], list) and entry[key]:
        i = rng.integers(len(entry[key]))
        entry[key][i] = (
            int(entry[key][i]) + [-8, -4, -1, 1, 4, 8, 2**40][rng.integers(7)]
            if isinstance(entry[key][i], int)
            else 0
        )
    elif choice == 2:
        del entry[key]
    else:
        entry[str(rng.choice(["extra", "dtype2", "offsets"]))] = 0
    return entry


def _raw(header: dict, body: bytes, raw: bytes | None = None) -> bytes:
    raw = json.dumps(header).encode() if raw is None else raw
    return len(raw).to_bytes(8, "little") + raw + body


def _hostile_header(data: bytes, rng) -> bytes:
    """Issue 21's strategies: lengths past the end, non-UTF-8, bad offsets, dtypes and shapes,
    overlaps, zero sizes."""
    n = int.from_bytes(data[:8], "little")
    header, body = json.loads(data[8: 8 + n]), data[8 + n:]
    names = [k for k in header if k != "__metadata__"]
    name = names[rng.integers(len(names))]
    entry = header[name]
    choice = rng.integers(9)
    if choice == 0:  # a header length just past the end of the file, or far past it
        return (
            (n + len(body) + int(rng.choice([1, 2, 8, 4096, 2**40]))).to_bytes(8, "little")
            + data[8:]
        )
    if choice == 1:  # bytes that are not UTF-8 inside a string of the header
        raw = bytearray(data[8: 8 + n])
        at = raw.find(name.encode()) if rng.random() < 0.5 else raw.find(b"F32")
        raw[max(at, 1)] = int(rng.choice([0x80, 0xC0, 0xFF, 0xED]))
        return _raw(header, body, bytes(raw))
    # NaN, infinite, huge, negative or fractional offsets, spelled as JSON allows or not
    if choice == 2:
        token = str(
            rng.choice(
                [
                    "NaN",
                    "Infinity",
                    "-Infinity",
                    "1e400",
                    "-8",
                    "18446744073709551616",
                    "2.5",
                    "1e3",
                ]
            )
        )
        raw = (
            json.dumps(header)
            .encode()
            .replace(
                json.dumps(entry["data_offsets"]).encode(),
                f"[{entry['data_offsets'][0]}, {token}]".encode(),
                1,
            )
        )
        return _raw(header, body, raw)
    if choice == 3:  # a dtype string that does not exist
        entry["dtype"] = str(
            rng.choice(["F128", "Q8", "f4", "float32", "F 32", "I3", "\u0000", "F32\n", "BF8"])
        )
    elif choice == 4 and rng.random() < 0.5:
        # a shape whose product overflows, or too many dimensions
        entry["shape"] = [
            list(s)
            for s in (
                [0, 2**63],
                [2**62, 0],
                [2**40, 2**40, 0],
                [0] * 65,
                [1] * 65,
                [2**32, 2**32],
                [2**64 - 1],
                [2**21] * 3,
            )
        ][rng.integers(8)]
    elif choice == 4:
        # an extra tensor of no bytes, so the offsets still tile, whose shape cannot exist
        shape = [
            list(s) for s in ([0, 2**63], [2**62, 0], [2**40, 2**40, 0], [0] * 65, [1] * 64 + [0])
        ][rng.integers(5)]
        header["empty'"] = {
            "dtype": str(rng.choice(["F32", "U8", "F64"])),
            "shape": shape,
            "data_offsets": [0, 0],
        }
    elif choice == 5 and len(names) >= 2:  # two tensors whose bytes overlap (sizes kept right)
        other = header[names[(names.index(name) + 1) % len(names)]]
        begin, end = other["data_offsets"]
        shift = int(rng.integers(0, max(end - begin, 1)))
        size = entry["data_offsets"][1] - entry["data_offsets"][0]
        entry["data_offsets"] = [begin + shift, begin + shift + size]
    elif choice == 6:  # a zero-size tensor, placed anywhere
        at = int(rng.integers(0, len(body) + 2))
        entry.update(shape=[0, int(rng.integers(1, 5))], data_offsets=[at, at])
    elif choice == 7:  # a duplicate key inside one entry
        raw = json.dumps(header).encode().replace(b'"dtype": ', b'"dtype": "I64", "dtype": ', 1)
        return _raw(header, body, raw)
    else:  # every tensor made empty, so only the header counts
        for other in names:
            header[other].update(shape=[0], data_offsets=[0, 0])
        return _raw(header, b"")
    return _raw(header, body)


def _safetensors_mutation(data: bytes, rng) -> bytes:
    if rng.random() < 0.4:
        return _common_mutation(data, rng)
    if rng.random() < 0.4:
        return _hostile_header(data, rng)
    n = int.from_bytes(data[:8], "little")
    header, body = json.loads(data[8: 8 + n]), data[8 + n:]
    names = [k for k in header if k != "__metadata__"]
    choice = rng.integers(8)
    if choice <= 2:
        name = names[rng.integers(len(names))]
        header[name] = _mutate_entry(dict(header[name]), rng)
    elif choice == 3 and len(names) >= 2:
        # swap two tensors' entries (names now point at other data)
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


# ---- torch.save zip archives (PyTorch's own format, read by tl.load) -----------------------------

def _torch_base(model, optimizer, generator) -> bytes:
    torch = pytest.importorskip("torch")
    import io

    def convert(value):
        if isinstance(value, tl.Tensor):
            return torch.from_numpy(value.numpy().copy())
        if isinstance(value, dict):
            return {k: convert(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(convert(v) for v in value)
        return value

    weight = torch.arange(12.0).reshape(3, 4)
    obj = {
        "model": convert(model.state_dict()),
        "optimizer": convert(optimizer.state_dict()),
        "step": 3,
        "views": [weight, weight.t(), weight[1:, ::2]],
        "ints": torch.arange(5),
        "mask": torch.tensor([True, False]),
        "half": torch.ones(2, dtype=torch.float16),
        "p": torch.nn.Parameter(torch.ones(2)),
        "note": "ünï",
    }
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def _mutate_pickle(data: bytes, rng) -> bytes:
    choice = rng.integers(4)
    if choice == 0:  # a small integer argument (BININT1: offsets, sizes, strides, numels) edited
        spots = [i for i in range(len(data) - 1) if data[i] == ord("K")]
        out = bytearray(data)
        at = spots[rng.integers(len(spots))] + 1
        out[at] = int(rng.choice([0, 1, 2, 3, 4, 5, 11, 12, 13, 255]))
        return bytes(out)
    # a global replaced by one the allow-list lacks, or by a storage type of another size
    if choice == 1:
        old = bytes(
            rng.choice(
                [
                    b"torch._utils\n_rebuild_tensor_v2\n",
                    b"torch\nFloatStorage\n",
                    b"collections\nOrderedDict\n",
                ]
            )
        )
        new = bytes(
            rng.choice(
                [
                    b"os\nsystem\n",
                    b"builtins\neval\n",
                    b"torch\nDoubleStorage\n",
                    b"torch\nBFloat16Storage\n",
                    b"torch._utils\n_rebuild_parameter\n",
                    b"torch\nBoolStorage\n",
                    b"torch\nfloat32\n",  # a dtype: pushed as itself, never called
                    b"torch\ndevice\n",  # called only with a device's type and index
                ]
            )
        )
        return data.replace(old, new, 1 + int(rng.integers(3)))
    # an opcode byte replaced (INST, OBJ, NEWOBJ, EXT1, a memo index, a huge length, ...)
    if choice == 2:
        out = bytearray(data)
        at = int(rng.integers(2, len(out)))
        out[at : at + 5] = bytes(
            [int(rng.choice(list(b"iobc\x81\x82\x92\x93rjhqQPUX\x8d\x8e\x96\x94\x95")))]
        ) + rng.bytes(4)
        return bytes(out)
    return _common_mutation(data, rng)


def _torch_mutation(data: bytes, rng) -> bytes:
    """Damage the archive itself, or one member and re-zip it so the CRCs are right again."""
    import io
    import zipfile

    if rng.random() < 0.3:
        return _common_mutation(data, rng)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    names = sorted(members)
    pickled = next(name for name in names if name.endswith("data.pkl"))
    choice = rng.integers(5)
    if choice <= 1:
        members[pickled] = _mutate_pickle(members[pickled], rng)
    elif choice == 2:  # a storage shortened, lengthened or emptied
        name = str(rng.choice([n for n in names if "/data/" in n]))
        members[name] = (
            members[name][: int(rng.integers(len(members[name]) + 1))]
            + rng.bytes(int(rng.integers(3)) * 4)
        )
    elif choice == 3:  # a member dropped, or byteorder junk
        if rng.random() < 0.5:
            del members[str(rng.choice(names))]
        else:
            members[pickled.replace("data.pkl", "byteorder")] = bytes(
                rng.choice([b"big", b"middle", b"", b"little\n"])
            )
    else:  # a member compressed, or the pickle duplicated under another folder
        method = zipfile.ZIP_DEFLATED if rng.random() < 0.5 else zipfile.ZIP_STORED
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for name, raw in members.items():
                archive.writestr(
                    name, raw, compress_type=method if name == pickled else zipfile.ZIP_STORED
                )
            if method == zipfile.ZIP_STORED:
                archive.writestr("other/data.pkl", members[pickled])
        return out.getvalue()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, raw in members.items():
            archive.writestr(name, raw)
    return out.getvalue()


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
    elif kind in ("tl.save", "tl.save, earlier format"):
        from tensorlib.serialization.nested import _save_safetensors

        (tl.save if kind == "tl.save" else _save_safetensors)(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "rng": [generator.get_state()],
                "step": 3,
                "note": "ünï",
            },
            base_path,
        )
    else:
        base_path.write_bytes(_torch_base(model, optimizer, generator))
    base = base_path.read_bytes()
    mutate = {
        "tlckpt": lambda: _tlckpt_mutation(base, fields, names, rng),
        "safetensors": lambda: _safetensors_mutation(base, rng),
        "tl.save": lambda: _torch_mutation(base, rng),  # tl.save writes torch.save's archive
        "tl.save, earlier format": lambda: _safetensors_mutation(base, rng),
        "torch.save": lambda: _torch_mutation(base, rng),
    }[kind]
    fields, names = _tlckpt_fields(base) if kind == "tlckpt" else (None, None)
    snapshot = _snapshot(model, optimizer, generator)
    outcomes: Counter = Counter()
    path = directory / f"mutant-{kind}"
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    tracing = tracemalloc.is_tracing()
    tracemalloc.start()
    try:
        for i in range(count):
            mutant = mutate()
            path.write_bytes(mutant)
            signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            try:
                if kind == "tlckpt":
                    load_checkpoint(path, model, optimizer, generator)
                elif kind == "safetensors":
                    load_model(model, path)
                else:  # tl.save and torch.save files both load through tl.load
                    tl.load(path)
                outcomes["loaded"] += 1
                _restore(snapshot, model, optimizer, generator)
            except CheckpointError:
                outcomes["rejected (CheckpointError)"] += 1
                if not _unchanged(snapshot, model, optimizer, generator):
                    (directory / f"partial-{kind}-{i}").write_bytes(mutant)
                    raise AssertionError(
                        f"{kind} mutant {i} was rejected after a partial load"
                    ) from None
            except Hang:
                (directory / f"hang-{kind}-{i}").write_bytes(mutant)
                raise AssertionError(f"{kind} mutant {i} took more than {HANG_SECONDS} s") from None
            except Exception as error:
                (directory / f"crash-{kind}-{i}").write_bytes(mutant)
                raise AssertionError(
                    f"{kind} mutant {i} raised {type(error).__name__}: {error}"
                ) from error
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            peak = tracemalloc.get_traced_memory()[1] - before
            if peak > MEMORY_BOUND:
                (directory / f"memory-{kind}-{i}").write_bytes(mutant)
                raise AssertionError(
                    f"{kind} mutant {i} ({len(mutant)} bytes) made the reader allocate {peak} bytes"
                )
            outcomes["peak bytes"] = max(outcomes["peak bytes"], peak)
    finally:
        signal.signal(signal.SIGALRM, previous)
        if not tracing:
            tracemalloc.stop()
    return outcomes


SEEDS = {"tlckpt": 1, "safetensors": 2, "tl.save": 3, "torch.save": 4, "tl.save, earlier format": 5}


@pytest.mark.parametrize("kind", list(SEEDS))
def test_fuzz(kind, tmp_path):
    outcomes = fuzz(kind, N, tmp_path, seed=SEEDS[kind])
    print(
        f"\nfuzz {kind}: {N} mutants: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
    )
    assert outcomes["loaded"] + outcomes["rejected (CheckpointError)"] == N
    assert outcomes["rejected (CheckpointError)"] > N // 2  # the mutations do hit the validation


if __name__ == "__main__":  # python tests/test_serialization_fuzz.py 10000
    import tempfile

    count = int(sys.argv[1]) if len(sys.argv) > 1 else N
    with tempfile.TemporaryDirectory() as scratch:
        for kind in SEEDS:
            print(kind, count, dict(fuzz(kind, count, Path(scratch))))
