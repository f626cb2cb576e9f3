"""Interop of tensorlib.serialization with the reference ``safetensors`` package and PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.serialization import load_file, save_file
from tensorlib.serialization import safetensors as st

st_numpy = pytest.importorskip("safetensors.numpy")

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


def _arrays(seed=0):
    rng = np.random.default_rng(seed)
    arrays = {}
    for i, dtype in enumerate(DTYPES):
        shape = [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 2, 3)][i % 6]
        values = (
            rng.random(shape) > 0.5
            if dtype is np.bool_
            else (rng.standard_normal(shape) * 40).astype(dtype)
        )
        arrays[f"t{i}.{np.dtype(dtype).name}.ünï"] = np.asarray(values, dtype=dtype)
    return arrays


@pytest.mark.parity
def test_our_bytes_equal_the_reference_writer():
    for seed in range(5):
        arrays = _arrays(seed)
        assert st.save({k: tl.from_numpy(v) for k, v in arrays.items()}) == st_numpy.save(arrays)
    assert st.save({}) == st_numpy.save({})


@pytest.mark.parity
def test_reference_reads_ours_and_we_read_the_reference(tmp_path):
    arrays = _arrays(1)
    save_file(
        {k: tl.from_numpy(v) for k, v in arrays.items()},
        tmp_path / "ours.safetensors",
        {"who": "tensorlib"},
    )
    theirs = st_numpy.load_file(tmp_path / "ours.safetensors")
    st_numpy.save_file(arrays, tmp_path / "theirs.safetensors", metadata={"who": "reference"})
    ours = load_file(tmp_path / "theirs.safetensors")
    for name, array in arrays.items():
        for got in (theirs[name], ours[name].numpy()):
            assert (
                got.dtype == array.dtype and got.shape == array.shape and np.array_equal(got, array)
            )
    from safetensors import safe_open

    with safe_open(tmp_path / "ours.safetensors", "np") as f:
        assert f.metadata() == {"who": "tensorlib"}
    assert st.load_with_metadata(tmp_path / "theirs.safetensors")[1] == {"who": "reference"}


@pytest.mark.parity
def test_files_the_reference_refuses_we_refuse():
    from tensorlib.serialization import CheckpointError

    good = st_numpy.save({"a": np.arange(4, dtype=np.float32), "b": np.ones(2, np.float64)})
    n = int.from_bytes(good[:8], "little")
    variants = [
        good[:-1],
        good + b"\0",
        good[:8] + good[8 : 8 + n].replace(b"[0,16]", b"[0,15]") + good[8 + n :],
        good[:8] + good[8 : 8 + n].replace(b'"F64"', b'"F32"') + good[8 + n :],
    ]
    for data in variants:
        with pytest.raises(Exception):  # noqa: B017 - the reference raises its own error type
            st_numpy.load(data)
        with pytest.raises(CheckpointError):
            st.load(data)


@pytest.mark.parity
def test_torch_interop(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file as torch_load_file
    from safetensors.torch import save_file as torch_save_file

    model = nn.MLP(4, [8], 3, generator=tl.Generator(0))
    tl.serialization.save_model(model, tmp_path / "ours.safetensors")
    reference = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    reference.load_state_dict(torch_load_file(tmp_path / "ours.safetensors"))
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    with torch.no_grad():
        expected = reference(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(model(tl.tensor(x)).numpy(), expected, rtol=1e-5, atol=1e-6)

    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    torch_save_file(reference.state_dict(), tmp_path / "theirs.safetensors")
    fresh = nn.MLP(4, [8], 3)
    tl.serialization.load_model(fresh, tmp_path / "theirs.safetensors")
    for name, value in reference.state_dict().items():
        assert np.array_equal(fresh.state_dict()[name].numpy(), value.numpy())
    # torch tensors of every dtype numpy shares, written by torch, read by us
    tensors = {
        "f16": torch.randn(3).half(),
        "i64": torch.arange(5),
        "b": torch.tensor([True, False]),
        "u8": torch.arange(4, dtype=torch.uint8),
        "scalar": torch.tensor(1.5, dtype=torch.float64),
    }
    torch_save_file(tensors, tmp_path / "dtypes.safetensors")
    back = load_file(tmp_path / "dtypes.safetensors")
    for name, value in tensors.items():
        assert (
            np.array_equal(back[name].numpy(), value.numpy())
            and back[name].numpy().dtype == value.numpy().dtype
        )
    bf16 = tmp_path / "bf16.safetensors"
    torch_save_file({"x": torch.ones(2, dtype=torch.bfloat16)}, bf16)
    with pytest.raises(tl.serialization.CheckpointError, match="BF16"):
        load_file(bf16)


@pytest.mark.parity
def test_tl_save_files_open_in_torch(tmp_path):
    """tl.save writes torch.save's archive: torch.load reads it with its default weights_only=True,
    and the earlier format's files (safetensors with the structure as metadata) still open in
    safetensors' reader."""
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file as torch_load_file

    from tensorlib.serialization.nested import _save_safetensors

    model = nn.MLP(4, [8], 3, generator=tl.Generator(0))
    optimizer = tl.optim.AdamW(model.parameters())
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 3}
    tl.save(checkpoint, tmp_path / "ckpt.tl")
    back = torch.load(tmp_path / "ckpt.tl")
    assert set(back["model"]) == set(model.state_dict()) and back["step"] == 3
    assert np.array_equal(back["model"]["0.weight"].numpy(), model.state_dict()["0.weight"].numpy())
    _save_safetensors(checkpoint, tmp_path / "old.tl")
    tensors = torch_load_file(tmp_path / "old.tl")
    assert set(tensors) == {f"model.{name}" for name in model.state_dict()}
    assert np.array_equal(tensors["model.0.weight"].numpy(), model.state_dict()["0.weight"].numpy())
