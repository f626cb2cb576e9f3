"""Chapter 7, Checkpointing: TLCKPT, safetensors, tl.save/tl.load, atomic writes, transactional
loads."""

from __future__ import annotations

import io
import json
import math
import os
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
from _chapter_replay import replayed_chapter

import tensorlib as tl
from tensorlib import nn
from tensorlib.serialization import (
    CheckpointError,
    atomic_write,
    load_checkpoint,
    load_file,
    load_model,
    save_checkpoint,
    save_file,
    save_model,
    tlckpt,
)
from tensorlib.serialization import safetensors as st

DTYPES = [
    np.float16,
    np.float32,
    np.float64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.bool_,
]


def _u32(n):
    return struct.pack("<I", n)


def _u64(n):
    return struct.pack("<Q", n)


def _name(text):
    raw = text.encode("utf-8")
    return _u32(len(raw)) + raw


def _record(name, array):
    array = np.asarray(array, dtype=np.float32)
    return (
        _name(name)
        + _u32(array.ndim)
        + b"".join(_u32(d) for d in array.shape)
        + _u64(array.size)
        + b"".join(struct.pack("<f", float(v)) for v in array.reshape(-1))
    )


def _linear(weight, bias):
    layer = nn.Linear(len(weight[0]), len(weight))
    with tl.no_grad():
        layer.weight.copy_(np.array(weight, dtype=np.float32))
        layer.bias.copy_(np.array(bias, dtype=np.float32))
    return layer


def _snapshot(model, optimizer=None, generator=None):
    params = {name: p.numpy().copy() for name, p in model.state_dict().items()}
    opt = optimizer.state_dict() if optimizer is not None else None
    gen = generator.get_state().numpy().copy() if generator is not None else None
    return params, opt, gen


def _assert_same(snapshot, model, optimizer=None, generator=None):
    params, opt, gen = snapshot
    for name, p in model.state_dict().items():
        assert (
            np.array_equal(p.numpy(), params[name]) and p.numpy().dtype == params[name].dtype
        ), name
    if optimizer is not None:
        now = optimizer.state_dict()
        assert now["param_groups"] == opt["param_groups"]
        assert now["state"].keys() == opt["state"].keys()
        for index, entry in now["state"].items():
            for key, value in entry.items():
                assert np.array_equal(value.numpy(), opt["state"][index][key].numpy()), (index, key)
    if generator is not None:
        assert np.array_equal(generator.get_state().numpy(), gen)


def _trained(seed=0, steps=2):
    model = nn.MLP(3, [4], 2, generator=tl.Generator(seed))
    optimizer = tl.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    x = tl.randn(6, 3, generator=tl.Generator(seed + 1))
    for _ in range(steps):
        model(x).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()
    return model, optimizer


# ---- TLCKPT: golden bytes built from the specification with struct ------------------------------

def test_golden_bytes_parameters_only(tmp_path):
    layer = _linear([[1.0, -2.0], [0.5, 3.25]], [0.125, -1.0])
    expected = (
        b"TLCKPT\0\0"
        + _u32(1)
        + _u32(0)
        + _u32(2)
        + _name("weight")
        + _u32(2)
        + _u32(2)
        + _u32(2)
        + _u64(4)
        + struct.pack("<4f", 1.0, -2.0, 0.5, 3.25)
        + _name("bias")
        + _u32(1)
        + _u32(2)
        + _u64(2)
        + struct.pack("<2f", 0.125, -1.0)
    )
    save_checkpoint(tmp_path / "l.tlckpt", layer)
    assert (tmp_path / "l.tlckpt").read_bytes() == expected
    fresh = nn.Linear(2, 2)
    load_checkpoint(tmp_path / "l.tlckpt", fresh)
    assert fresh.weight.numpy().tolist() == [[1.0, -2.0], [0.5, 3.25]]
    assert fresh.bias.numpy().tolist() == [0.125, -1.0]


def test_golden_bytes_with_adamw_and_rng(tmp_path):
    model, optimizer = _trained()
    generator = tl.Generator(123)
    generator.uniform(5)
    names = [name for name, _ in model.named_parameters()]
    params = dict(model.named_parameters())
    state = optimizer.state_dict()["state"]
    expected = b"TLCKPT\0\0" + _u32(1) + _u32(0b11) + _u32(len(names))
    for name in names:
        expected += _record(name, params[name].numpy())
    expected += struct.pack("<6f", 1e-2, 0.9, 0.999, 1e-8, 0.1, 0.0) + _u32(len(names))
    for index, name in enumerate(names):
        entry = state[index]
        expected += _name(name) + _u64(int(entry["step"].item())) + _u64(params[name].numel())
        expected += (
            entry["exp_avg"].numpy().astype("<f4").tobytes()
            + entry["exp_avg_sq"].numpy().astype("<f4").tobytes()
        )
    expected += struct.pack(
        "<QQ", *np.frombuffer(generator.get_state().numpy().tobytes(), "<u8").tolist()
    )
    save_checkpoint(tmp_path / "c.tlckpt", model, optimizer, generator)
    assert (tmp_path / "c.tlckpt").read_bytes() == expected
    decoded = tlckpt.decode(expected)
    assert (
        list(decoded.parameters) == names and decoded.rng == generator.get_state().numpy().tobytes()
    )
    assert decoded.adamw.moments[names[0]][0] == 2


def test_rng_section_layout_is_state_then_seed():
    generator = tl.Generator(7)
    generator.next_u64(3)
    state = generator.get_state().numpy().tobytes()
    assert struct.unpack("<QQ", state) == ((7 + 3 * 0x9E3779B97F4A7C15) % 2**64, 7)


def test_resume_through_tlckpt_matches_uninterrupted(tmp_path):
    model, optimizer = _trained(steps=3)
    generator = tl.Generator(5)
    save_checkpoint(tmp_path / "c.tlckpt", model, optimizer, generator)
    other, other_opt = _trained(seed=9, steps=1)
    other_gen = tl.Generator(0)
    load_checkpoint(tmp_path / "c.tlckpt", other, other_opt, other_gen)
    x = tl.randn(6, 3, generator=tl.Generator(42))
    for m, o in ((model, optimizer), (other, other_opt)):
        m(x).square().mean().backward()
        o.step()
    for a, b in zip(model.parameters(), other.parameters(), strict=True):
        assert np.array_equal(a.numpy(), b.numpy())
    assert np.array_equal(generator.get_state().numpy(), other_gen.get_state().numpy())
    # the live float64 value kept: it rounds to the stored float32
    assert other_opt.param_groups[0]["lr"] == 1e-2


def test_parameters_only_from_a_full_checkpoint(tmp_path):
    model, optimizer = _trained()
    save_checkpoint(tmp_path / "c.tlckpt", model, optimizer, tl.Generator(1))
    fresh = nn.MLP(3, [4], 2)
    result = load_checkpoint(tmp_path / "c.tlckpt", fresh)
    assert result.adamw is not None and result.rng is not None
    assert all(
        np.array_equal(a.numpy(), b.numpy())
        for a, b in zip(model.parameters(), fresh.parameters(), strict=True)
    )


def test_legacy_tlweight(tmp_path):
    data = (
        b"TLWEIGHT" + _u32(1) + _u32(2) + _record("weight", [[2.0, 4.0]]) + _record("bias", [1.5])
    )
    (tmp_path / "w.bin").write_bytes(data)
    layer = nn.Linear(2, 1)
    result = load_checkpoint(tmp_path / "w.bin", layer)
    assert result.legacy and result.adamw is None
    assert layer.weight.numpy().tolist() == [[2.0, 4.0]] and layer.bias.numpy().tolist() == [1.5]
    with pytest.raises(CheckpointError, match="no AdamW section"):
        load_checkpoint(tmp_path / "w.bin", layer, tl.optim.AdamW(layer.parameters()))


@pytest.mark.parametrize("mutate, message", [
    (lambda d: b"TLCKPX\0\0" + d[8:], "magic"),
    (lambda d: d[:8] + _u32(2) + d[12:], "version 2 is not supported"),
    (lambda d: d[:12] + _u32(4) + d[16:], "unknown flag bits"),
    (lambda d: d[:-1], "truncated"),
    (lambda d: d + b"\0", "trailing bytes"),
    (lambda d: d[:16] + _u32(2**32 - 1) + d[20:], "cannot fit"),
    (lambda d: d[:20] + _u32(2**32 - 1) + d[24:], "bytes long but only"),
])
def test_tlckpt_rejections(tmp_path, mutate, message):
    layer = _linear([[1.0, 2.0]], [3.0])
    save_checkpoint(tmp_path / "l.tlckpt", layer)
    data = mutate((tmp_path / "l.tlckpt").read_bytes())
    with pytest.raises(CheckpointError, match=message):
        tlckpt.decode(data)


def test_tlckpt_huge_claims_rejected_before_allocation():
    # ndim 1, dims [2**31], element count 2**31: 8 GiB claimed by a 50-byte file
    data = (
        b"TLCKPT\0\0"
        + _u32(1)
        + _u32(0)
        + _u32(1)
        + _name("w")
        + _u32(1)
        + _u32(2**31)
        + _u64(2**31)
        + b"\0" * 16
    )
    with pytest.raises(
        CheckpointError, match=r"claims 2147483648 elements .* only 16 bytes are left"
    ):
        tlckpt.decode(data)
    data = (
        b"TLCKPT\0\0"
        + _u32(1)
        + _u32(0)
        + _u32(1)
        + _name("w")
        + _u32(1)
        + _u32(3)
        + _u64(2**60)
        + b"\0" * 12
    )
    with pytest.raises(CheckpointError, match="not the product of its dims"):
        tlckpt.decode(data)


def test_tlckpt_rejects_duplicates_nonfinite_and_bad_utf8():
    head = b"TLCKPT\0\0" + _u32(1) + _u32(0) + _u32(2)
    with pytest.raises(CheckpointError, match="appears twice"):
        tlckpt.decode(head + _record("w", [1.0]) + _record("w", [2.0]))
    with pytest.raises(CheckpointError, match="non-finite value"):
        tlckpt.decode(head + _record("w", [1.0]) + _record("b", [math.inf]))
    with pytest.raises(CheckpointError, match="not valid UTF-8"):
        tlckpt.decode(
            head + _u32(2) + b"\xff\xfe" + _u32(0) + _u64(1) + b"\0" * 4 + _record("b", [1.0])
        )


def test_tlckpt_names_and_shapes_checked_against_the_model(tmp_path):
    save_checkpoint(tmp_path / "l.tlckpt", nn.Linear(2, 3))
    with pytest.raises(CheckpointError, match="shape"):
        load_checkpoint(tmp_path / "l.tlckpt", nn.Linear(3, 2))
    with pytest.raises(CheckpointError, match="do not match"):
        load_checkpoint(tmp_path / "l.tlckpt", nn.MLP(2, [3], 3))


def test_tlckpt_refuses_what_it_cannot_hold(tmp_path):
    with pytest.raises(TypeError, match="float32 only"):
        save_checkpoint(tmp_path / "d.tlckpt", nn.Linear(2, 2).double())
    layer = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="AdamW state only"):
        save_checkpoint(
            tmp_path / "a.tlckpt", layer, tl.optim.Adam(layer.parameters(), weight_decay=0.1)
        )
    with pytest.raises(ValueError, match="amsgrad"):
        save_checkpoint(
            tmp_path / "a.tlckpt", layer, tl.optim.AdamW(layer.parameters(), amsgrad=True)
        )
    # no stray temporary file
    assert not (tmp_path / "a.tlckpt").exists() and not list(tmp_path.iterdir())


def test_tlckpt_load_is_transactional(tmp_path):
    model, optimizer = _trained()
    generator = tl.Generator(3)
    save_checkpoint(tmp_path / "c.tlckpt", model, optimizer, generator)
    data = bytearray((tmp_path / "c.tlckpt").read_bytes())
    # the last second moment becomes a NaN, found after every parameter was read
    data[-20:-16] = b"\xff\xff\xff\xff"
    (tmp_path / "bad.tlckpt").write_bytes(bytes(data))
    target, target_opt = _trained(seed=4, steps=1)
    target_gen = tl.Generator(8)
    before = _snapshot(target, target_opt, target_gen)
    with pytest.raises(CheckpointError):
        load_checkpoint(tmp_path / "bad.tlckpt", target, target_opt, target_gen)
    _assert_same(before, target, target_opt, target_gen)


def test_tlckpt_optimizer_failure_rolls_back_the_model(tmp_path):
    model, optimizer = _trained()
    save_checkpoint(tmp_path / "c.tlckpt", model, optimizer)
    target, target_opt = _trained(seed=4, steps=1)
    before = _snapshot(target, target_opt)

    calls = []

    class Refusing(tl.optim.AdamW):
        def load_state_dict(self, state_dict):
            calls.append(1)
            if len(calls) == 1:  # the checkpoint's state, not the rollback's
                raise RuntimeError("disk on fire")
            super().load_state_dict(state_dict)

    target_opt.__class__ = Refusing
    with pytest.raises(CheckpointError, match="rolled back"):
        load_checkpoint(tmp_path / "c.tlckpt", target, target_opt)
    target_opt.__class__ = tl.optim.AdamW
    _assert_same(before, target)


# ---- safetensors
# ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (3,), (2, 3, 4)], ids=str)
def test_safetensors_round_trip_every_dtype_and_shape(tmp_path, dtype, shape):
    rng = np.random.default_rng(0)
    array = (
        (rng.standard_normal(shape) * 50).astype(dtype)
        if dtype is not np.bool_
        else rng.random(shape) > 0.5
    )
    tensors = {
        "x": tl.from_numpy(np.asarray(array)),
        "ünïcode/名前 ✓": tl.from_numpy(np.asarray(array).copy()),
    }
    save_file(tensors, tmp_path / "t.safetensors", metadata={"ключ": "значение"})
    back = load_file(tmp_path / "t.safetensors")
    assert set(back) == set(tensors)
    for value in back.values():
        assert isinstance(value, tl.Tensor)
        assert value.numpy().dtype == np.dtype(dtype) and value.numpy().shape == shape
        assert np.array_equal(value.numpy(), np.asarray(array))
    assert st.load(st.save(tensors))["x"].numpy().tobytes() == np.asarray(array).tobytes()
    assert st.load_with_metadata(tmp_path / "t.safetensors")[1] == {"ключ": "значение"}


def _st_bytes(header, data=b""):
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\x01\0\0", "shorter than the 8-byte header length"),
        (struct.pack("<Q", 2**62) + b"{}", "header length"),
        (struct.pack("<Q", 200_000_000) + b"{}" + b" " * 10, "header length"),
        (struct.pack("<Q", 2) + b"[]", "does not start with"),
        (struct.pack("<Q", 4) + b'{"a"', "not valid JSON"),
        (struct.pack("<Q", 3) + b"{\xff}", "UTF-8"),
        (
            _st_bytes(
                {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "x": 1}}, bytes(8)
            ),
            "exactly the keys",
        ),
        (
            _st_bytes({"a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}, bytes(4)),
            "no numpy dtype",
        ),
        (
            _st_bytes({"a": {"dtype": "Q7", "shape": [2], "data_offsets": [0, 4]}}, bytes(4)),
            "not supported",
        ),
        (
            _st_bytes({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, bytes(4)),
            "integers >= 0",
        ),
        (
            _st_bytes({"a": {"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}}, bytes(4)),
            "integers >= 0",
        ),
        (
            _st_bytes({"a": {"dtype": "F32", "shape": [2**60], "data_offsets": [0, 8]}}, bytes(8)),
            "needs",
        ),
        (
            _st_bytes({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, bytes(8)),
            "span",
        ),
        (
            _st_bytes(
                {
                    "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                    "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]},
                },
                bytes(8),
            ),
            "overlaps",
        ),
        (
            _st_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(8)),
            "hole",
        ),
        (
            _st_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, bytes(8)),
            "trailing",
        ),
        (
            _st_bytes({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, bytes(4)),
            "truncated",
        ),
        (
            _st_bytes({"a": {"dtype": "BOOL", "shape": [1], "data_offsets": [0, 1]}}, b"\x02"),
            "neither 0 nor 1",
        ),
        (_st_bytes({"__metadata__": {"a": 1}}), "string values"),
        (struct.pack("<Q", 31) + b'{"a":{},"a":{}}' + b" " * 16, "duplicate key"),
        (struct.pack("<Q", 8) + b'{"a":NaN', "not valid JSON"),
        (struct.pack("<Q", 20000) + b"{" * 20000, "not valid JSON"),
    ],
)
def test_safetensors_rejections(data, message):
    with pytest.raises(CheckpointError, match=message):
        st.load(data)


def test_safetensors_refuses_shared_memory_and_bad_inputs(tmp_path):
    base = tl.zeros(4)
    with pytest.raises(ValueError, match="share memory"):
        st.save({"a": base, "b": base})
    whole = np.zeros(10, np.float32)
    with pytest.raises(ValueError, match="share memory"):
        st.save({"a": tl.from_numpy(whole[:6]), "b": tl.from_numpy(whole[4:])})
    assert st.load(
        st.save({"a": tl.from_numpy(whole[:5]), "b": tl.from_numpy(whole[5:])})
    )["b"].shape == (5,)
    with pytest.raises(TypeError, match="expected a tensorlib Tensor"):
        st.save({"a": [1.0, 2.0]})
    with pytest.raises(ValueError, match="__metadata__"):
        st.save({"__metadata__": tl.zeros(1)})
    with pytest.raises(TypeError, match="metadata"):
        st.save({"a": tl.zeros(1)}, metadata={"n": 1})


def test_save_model_ties_and_reties(tmp_path):
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(5, 3)
            self.head = nn.Linear(3, 5, bias=False)
            self.head.weight = self.embed.weight

    model = Tied()
    with pytest.raises(ValueError, match="share memory"):
        save_file(model.state_dict(), tmp_path / "x.safetensors")
    save_model(model, tmp_path / "m.safetensors")
    tensors, metadata = st.load_with_metadata(tmp_path / "m.safetensors")
    assert list(tensors) == ["embed.weight"] and metadata == {"head.weight": "embed.weight"}
    fresh = Tied()
    assert load_model(fresh, tmp_path / "m.safetensors") == ([], [])
    assert fresh.head.weight is fresh.embed.weight
    assert np.array_equal(fresh.embed.weight.numpy(), model.embed.weight.numpy())
    with pytest.raises(CheckpointError, match="does not fit"):
        load_model(nn.Linear(3, 5), tmp_path / "m.safetensors")


def test_load_model_is_transactional(tmp_path):
    source = nn.MLP(3, [4], 2, generator=tl.Generator(0))
    save_model(source, tmp_path / "m.safetensors")
    tensors = load_file(tmp_path / "m.safetensors")
    tensors["2.bias"] = tl.zeros(3)  # the last tensor has the wrong shape
    save_file(tensors, tmp_path / "bad.safetensors")
    target = nn.MLP(3, [4], 2, generator=tl.Generator(1))
    before = _snapshot(target)
    with pytest.raises(CheckpointError, match="2.bias"):
        load_model(target, tmp_path / "bad.safetensors")
    _assert_same(before, target)


# ---- tl.save / tl.load
# ----------------------------------------------------------------------------

def test_save_load_nested_objects(tmp_path):
    model, optimizer = _trained()
    shared = tl.arange(3.0)
    obj = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": 7,
        "lr": 1e-3,
        "values": [None, True, -2, 0.1, float("inf"), float("nan"), "ünï"],
        "pair": (1, (2.5, "x")),
        5: {"a": shared, "b": shared},
        "empty": {},
        "scalar": tl.tensor(2.5),
        "nothing": tl.zeros(0, 3),
        "numpy scalars": [np.float32(0.5), np.int64(3), np.bool_(True)],
        (1, "tuple key"): [b"bytes \xff", b""],
    }
    tl.save(obj, tmp_path / "o.tl")
    back = tl.load(tmp_path / "o.tl")
    assert back["step"] == 7 and back["lr"] == 1e-3 and back["pair"] == (1, (2.5, "x"))
    assert (
        back["values"][:5] == [None, True, -2, 0.1, float("inf")]
        and math.isnan(back["values"][5])
    )
    assert back["values"][6] == "ünï" and back["empty"] == {}
    assert back[5]["a"] is back[5]["b"] and back[5]["a"].numpy().tolist() == [0.0, 1.0, 2.0]
    assert back["scalar"].shape == () and back["nothing"].shape == (0, 3)
    assert back["numpy scalars"] == [0.5, 3, True]
    assert back[1, "tuple key"] == [b"bytes \xff", b""]
    for name, value in model.state_dict().items():
        assert np.array_equal(back["model"][name].numpy(), value.numpy())
    fresh = tl.optim.AdamW(nn.MLP(3, [4], 2).parameters())
    fresh.load_state_dict(back["optimizer"])
    assert fresh.param_groups[0]["betas"] == (0.9, 0.999)


@pytest.mark.parametrize(
    "value, path",
    [
        (object(), "the object"),
        ({"a": [1, {2, 3}]}, "a.1"),
        ({"a": np.zeros(2)}, "a"),
        ({"f": len}, "f"),
        ({"b": bytearray(b"bytes")}, "b"),
        ({"k": {frozenset(): 1}}, r"k\.<key frozenset\(\)>"),
    ],
)
def test_save_pickles_other_types_as_torch_save(tmp_path, value, path):
    # once refused with a TypeError naming ``path``; now pickled, as torch.save pickles them
    tl.save(value, tmp_path / "x.tl")
    assert type(tl.load(tmp_path / "x.tl", weights_only=False)) is type(value)


def test_load_reads_the_safetensors_files_of_earlier_versions_of_save(tmp_path):
    """Before tl.save wrote torch.save's archive, it wrote safetensors with the structure as JSON
    metadata; users have such files, and tl.load still reads them whole."""
    from tensorlib.serialization.nested import _save_safetensors

    shared = tl.arange(3.0)
    obj = {"model": {"w": shared, "tied": shared}, "step": 3, 4: (None, float("inf"), "x")}
    _save_safetensors(obj, tmp_path / "old.ckpt")
    assert sorted(load_file(tmp_path / "old.ckpt")) == ["model.w"]  # plain safetensors
    back = tl.load(tmp_path / "old.ckpt")
    assert back["model"]["w"] is back["model"]["tied"] and back[4] == (None, float("inf"), "x")
    assert back["step"] == 3 and back["model"]["w"].numpy().tolist() == [0.0, 1.0, 2.0]
    buffer = io.BytesIO()
    _save_safetensors(obj, buffer)
    buffer.seek(0)
    assert tl.load(buffer)["step"] == 3


def test_load_plain_safetensors_and_bad_structures(tmp_path):
    save_file({"w": tl.ones(2)}, tmp_path / "plain.safetensors")
    assert list(tl.load(tmp_path / "plain.safetensors")) == ["w"]
    for structure, message in [
        ('{"tensor": "missing"}', "does not hold"),
        ('{"set": []}', "unknown node"),
        ('{"dict": [[1.5, 2]]}', "dict entry"),
        ("[1, 2]", "one-key object"),
        ('{"list": []}', "never uses"),
        ("[" * 100 + "]" * 100, "one-key"),
        ('{"list": [' * 80 + "]}" * 80, "levels deep"),
        ("{", "not valid JSON"),
    ]:
        save_file({"w": tl.ones(2)}, tmp_path / "s.tl", {"tensorlib.structure": structure})
        with pytest.raises(CheckpointError, match=message):
            tl.load(tmp_path / "s.tl")


def test_loaders_never_unpickle_or_evaluate(tmp_path):
    """A pickle that runs code when unpickled, and Python code as a structure, are refused without
    running."""
    import pickle

    marker = tmp_path / "code ran"

    class Payload:
        def __reduce__(self):
            return (os.mkdir, (str(marker),))

    data = pickle.dumps({"model": Payload(), "step": 1})
    path = tmp_path / "evil.ckpt"
    path.write_bytes(data)
    for load in (
        tl.load,
        load_file,
        lambda f: load_checkpoint(f, nn.Linear(2, 2)),
        lambda f: st.load(f.read_bytes()),
    ):
        with pytest.raises(CheckpointError):
            load(path)
    code = f"__import__('os').mkdir({str(marker)!r})"
    save_file({"w": tl.ones(2)}, tmp_path / "code.tl", {"tensorlib.structure": code})
    with pytest.raises(CheckpointError, match="not valid JSON"):
        tl.load(tmp_path / "code.tl")
    assert not marker.exists()
    pickle.loads(data)  # the payload is live: unpickling it does run its code
    assert marker.exists()


# ---- atomic writes
# --------------------------------------------------------------------------------

def test_atomic_write_failure_keeps_the_old_file(tmp_path):
    target = tmp_path / "f.bin"
    atomic_write(target, [b"old"])

    def chunks():
        yield b"new and half"
        raise RuntimeError("crash in the middle")

    with pytest.raises(RuntimeError):
        atomic_write(target, chunks())
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["f.bin"]


def test_atomic_write_permissions_and_stale_temporaries(tmp_path):
    target = tmp_path / "f.bin"
    # a pid above Linux's pid_max: a dead writer
    stale = tmp_path / f".f.bin.tmp-{2**22 + 12345}-abcd"
    stale.write_bytes(b"partial")
    umask = os.umask(0o022)
    os.umask(umask)
    atomic_write(target, [b"data"], durable=False)
    assert target.read_bytes() == b"data" and not stale.exists()
    assert (target.stat().st_mode & 0o777) == (0o666 & ~umask)


def test_tlckpt_round_trip_scalar_zero_size_and_non_ascii_names(tmp_path):
    class Odd(nn.Module):
        def __init__(self, seed):
            super().__init__()
            g = tl.Generator(seed)
            self.register_parameter("größe", nn.Parameter(tl.tensor(g.normal(()))))
            self.register_parameter("空", nn.Parameter(tl.zeros(0, 3)))
            self.register_parameter("w", nn.Parameter(tl.tensor(g.normal((2, 1, 3)))))

    source, target = Odd(0), Odd(1)
    save_checkpoint(tmp_path / "odd.tlckpt", source)
    data = (tmp_path / "odd.tlckpt").read_bytes()
    assert _name("größe") in data and _name("空") in data  # u32 lengths count UTF-8 bytes
    load_checkpoint(tmp_path / "odd.tlckpt", target)
    for (name, a), (_, b) in zip(source.named_parameters(), target.named_parameters(), strict=True):
        assert a.shape == b.shape and a.numpy().tobytes() == b.numpy().tobytes(), name
    assert dict(target.named_parameters())["空"].shape == (0, 3)


def test_tl_save_stores_a_tied_state_dict_once(tmp_path):
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(6, 4)
            self.head = nn.Linear(4, 6, bias=False)
            self.head.weight = self.embed.weight

    model = Tied()
    tl.save({"model": model.state_dict()}, tmp_path / "tied.tl")
    members = zipfile.ZipFile(tmp_path / "tied.tl").namelist()
    assert [name for name in members if "/data/" in name] == ["tied/data/0"]  # one copy on disk
    state = tl.load(tmp_path / "tied.tl")["model"]
    # two tensors viewing one storage, as torch.load gives them (state_dict detaches each name)
    assert np.shares_memory(state["embed.weight"].numpy(), state["head.weight"].numpy())
    fresh = Tied()
    fresh.load_state_dict(state)
    assert fresh.head.weight is fresh.embed.weight
    assert np.array_equal(fresh.embed.weight.numpy(), model.embed.weight.numpy())


def test_tied_gpt_head_round_trips_through_every_format(tmp_path):
    """Chapter 5's GPT ties its output head to the token embedding; every format keeps it tied."""
    gpt = pytest.importorskip(
        "tensorlib.gpt.model", reason="chapter 5 (tensorlib.gpt) is not merged yet"
    )
    config = gpt.GPTConfig(
        block_size=8, vocab_size=11, n_layer=1, n_head=2, n_embd=8, tie_weights=True
    )
    model = gpt.GPT(config, generator=tl.Generator(0))
    assert model.lm_head.weight is model.transformer.wte.weight
    with pytest.raises(ValueError, match="share memory"):
        save_file(model.state_dict(), tmp_path / "x.safetensors")
    save_model(model, tmp_path / "gpt.safetensors")
    tensors, metadata = st.load_with_metadata(tmp_path / "gpt.safetensors")
    assert "lm_head.weight" not in tensors and metadata == {
        "lm_head.weight": "transformer.wte.weight"
    }
    tl.save({"model": model.state_dict()}, tmp_path / "gpt.tl")
    save_checkpoint(tmp_path / "gpt.tlckpt", model)
    ids = tl.tensor([[1, 2, 3, 4]])
    expected = model(ids)
    expected = (expected[0] if isinstance(expected, tuple) else expected).numpy()
    for load in (lambda m: load_model(m, tmp_path / "gpt.safetensors"),
                 lambda m: m.load_state_dict(tl.load(tmp_path / "gpt.tl")["model"]),
                 lambda m: load_checkpoint(tmp_path / "gpt.tlckpt", m)):
        fresh = gpt.GPT(config, generator=tl.Generator(1))
        load(fresh)
        assert fresh.lm_head.weight is fresh.transformer.wte.weight
        out = fresh(ids)
        assert np.array_equal((out[0] if isinstance(out, tuple) else out).numpy(), expected)


# -- chapter 7 replayed: objects made early keep working after every later cell ------------------
@pytest.fixture
def chapter7():
    """A fresh namespace standing in for the notebook: the chapter's modules point at it, as in the
    notebook."""
    with replayed_chapter("07_checkpointing", "chapter7_replay") as replay:
        yield replay


def test_objects_made_early_in_chapter_7_keep_working_after_every_later_cell(chapter7, tmp_path):
    notebook, cells = chapter7
    run = [False] * len(cells)

    def run_until(name: str) -> None:
        for index, source in enumerate(cells):
            if not run[index]:
                exec(compile(source, "<chapter7_replay>", "exec"), notebook.__dict__)
                run[index] = True
            if hasattr(notebook, name):
                return

    run_until("ByteReader")
    reader = notebook.ByteReader(struct.pack("<I", 7) + b"abc", "early")
    error_class = notebook.CheckpointError
    run_until("TLCheckpoint")
    early = notebook.TLCheckpoint({"w": np.arange(6, dtype=np.float32).reshape(2, 3)})
    run_until("_no_such_name")  # every later cell
    assert reader.u32("count") == 7 and bytes(reader.take(3, "tail")) == b"abc"
    with pytest.raises(error_class, match="early: byte 7: tail needs 1 bytes"):
        reader.take(1, "tail")
    data = b"".join(bytes(chunk) for chunk in notebook.encode(early))
    again = notebook.decode(data, "file")
    assert isinstance(again, type(early)) and np.array_equal(
        again.parameters["w"], early.parameters["w"]
    )
    with pytest.raises(error_class):  # what the finished chapter raises, the early class catches
        notebook.decode(data[:-1], "file")
    path = tmp_path / "model.safetensors"
    notebook.save_file({"w": tl.tensor(early.parameters["w"])}, path)
    assert np.array_equal(notebook.load_file(path)["w"].numpy(), early.parameters["w"])


# -- chapter 7 uses what it has written, not the installed package's copy
# ---------------------------
_HIDE_THE_PACKAGE = '''
import tensorlib.serialization as _tl_installed

def _tl_not_yet(name):
    raise AssertionError(f"the chapter used the installed package's tensorlib.serialization.{name} "
                         "instead of its own definition (or one written before it)")

for _tl_name in list(_tl_installed.__all__):
    delattr(_tl_installed, _tl_name)
_tl_installed.__getattr__ = _tl_not_yet
del _tl_installed, _tl_name
'''


def test_chapter_7_runs_without_the_installed_serialization_names(load_tool, tmp_path, monkeypatch):
    """Chapter 7, run where ``tl.serialization.<name>`` fails: no cell reaches the package's copy.

    The chapter's own cells stand in for the package's modules (``point_modules_at_notebook``), so
    ``from tensorlib.serialization import save_checkpoint`` after the cell that writes it finds the
    notebook's function; ``tl.serialization.save_checkpoint`` would be the installed one. The
    kernel starts in an empty folder, as a downloaded notebook runs. (Child processes the chapter
    starts import the installed package, which is generated from the same cells.)
    """
    import nbformat

    notebook = nbformat.read(
        Path(__file__).resolve().parent.parent / "book" / "07_checkpointing.ipynb", as_version=4
    )
    notebook.cells.insert(0, nbformat.v4.new_code_cell(_HIDE_THE_PACKAGE))
    repo = str(Path(__file__).resolve().parent.parent)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([repo, *filter(None, [os.environ.get("PYTHONPATH")])])
    )
    load_tool("notebooks").execute(notebook, tmp_path, 600, allow_errors=True, record_timing=False)
    errors = [f"cell {number - 1}: {output.get('ename')}: {output.get('evalue')}"
              for number, cell in enumerate(notebook.cells) if cell.cell_type == "code"
              and "raises-exception" not in cell.metadata.get("tags", [])
              for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    assert errors == [], (
        "chapter 7 fails when the installed package's serialization names are hidden:\n  "
        + "\n  ".join(errors)
    )
