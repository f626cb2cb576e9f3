"""Chapter 7: ``tl.save`` pickles any object and ``tl.load(f, weights_only=False)`` runs the whole
pickle, as ``torch.save`` / ``torch.load`` (``tensorlib.serialization.pt_writer._ObjectPickler``,
``tensorlib.serialization.pytorch.FullPickleReader``).

Without torch: whole tensorlib models, dataclasses, ndarrays and sets saved and loaded back, the
weights-only refusal naming the global, PyTorch's names resolved to tensorlib's. With torch 2.13
(``parity``): files each library wrote load in the other with ``weights_only=False`` (an ndarray,
a dataclass of this importable module, whole PyTorch models into tensorlib's layers), the
recurrent layers refused by name, and the four surveyed programs' patterns run unchanged under
``python -m tensorlib.run_as_torch``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import os
import pickle
import pickletools
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.serialization import CheckpointError, get_unsafe_globals_in_checkpoint
from tensorlib.serialization.pytorch import FullPickleReader

ROOT = Path(__file__).resolve().parent.parent
HAS_TORCH = importlib.util.find_spec("torch") is not None


@dataclasses.dataclass
class Config:
    """A training script's settings, as build-nanogpt keeps them (importable: the test module)."""

    n_layer: int = 2
    n_embd: int = 8
    lr: float = 3e-4


def _saved(obj, **kwargs) -> bytes:
    buffer = io.BytesIO()
    tl.save(obj, buffer, **kwargs)
    return buffer.getvalue()


def _load(blob: bytes, **kwargs):
    return tl.load(io.BytesIO(blob), **kwargs)


def _model():
    return nn.Sequential(
        nn.Conv2d(1, 2, 3, padding=1, generator=tl.Generator(0)), nn.ReLU(), nn.Flatten(),
        nn.Linear(32, 3, generator=tl.Generator(1)), nn.Dropout(0.2), nn.BatchNorm1d(3),
    )


X = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)


# --------------------------------------------------------------------------- tensorlib alone


def test_a_whole_model_round_trips_with_the_same_outputs():
    model = _model().eval()
    blob = _saved(model)
    assert get_unsafe_globals_in_checkpoint(io.BytesIO(blob))[:2] == [
        "tensorlib.nn.modules.container.Sequential", "tensorlib.nn.modules.conv.Conv2d"
    ]
    with pytest.raises(CheckpointError, match="global tensorlib.nn.modules.container.Sequential"
                                              ".*load it with weights_only=False"):
        _load(blob)
    back = _load(blob, weights_only=False)
    assert type(back) is nn.Sequential and [type(m) for m in back] == [type(m) for m in model]
    assert np.array_equal(back(tl.from_numpy(X)).numpy(), model(tl.from_numpy(X)).numpy())
    assert list(back.state_dict()) == list(model.state_dict())
    assert isinstance(back[0].weight, nn.Parameter) and back[0].weight.requires_grad
    back.train()  # a loaded model trains: its parameters reach an optimizer and change
    optimizer = tl.optim.SGD(back.parameters(), lr=0.1)
    back(tl.from_numpy(X)).square().mean().backward()
    optimizer.step()
    assert not np.array_equal(back[3].weight.numpy(), model[3].weight.numpy())


def test_a_checkpoint_dict_with_a_dataclass_and_ndarrays_round_trips(tmp_path):
    checkpoint = {"model": _model().state_dict(), "config": Config(), "step": 3,
                  "losses": np.array([2.5, 1.25]), "seen": {1, 2}, "shape": tl.ones(2, 3).shape}
    tl.save(checkpoint, tmp_path / "c.pt")
    assert get_unsafe_globals_in_checkpoint(tmp_path / "c.pt")[0] == f"{__name__}.Config"
    with pytest.raises(CheckpointError, match=f"global {__name__}.Config, which a weights-only"):
        tl.load(tmp_path / "c.pt")
    back = tl.load(tmp_path / "c.pt", weights_only=False)
    assert back["config"] == Config() and back["step"] == 3 and back["seen"] == {1, 2}
    assert isinstance(back["losses"], np.ndarray) and back["losses"].tolist() == [2.5, 1.25]
    assert tuple(back["shape"]) == (2, 3)
    for name, value in checkpoint["model"].items():
        assert np.array_equal(back["model"][name].numpy(), value.numpy())


def test_a_plain_checkpoint_keeps_its_bytes_and_loads_alike_both_ways():
    state = {"w": tl.arange(6.0).reshape(2, 3), "opt": {"lr": 0.1, "betas": (0.9, 0.99)}}
    blob = _saved(state)
    assert get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == []
    whole, weights = _load(blob, weights_only=False), _load(blob)
    assert whole["opt"] == weights["opt"] and whole["w"].tolist() == weights["w"].tolist()


def test_tied_tensors_and_views_stay_shared_in_a_pickled_object():
    weight = tl.arange(6.0).reshape(2, 3)
    back = _load(_saved({"a": weight, "b": weight, "t": weight.t(), "c": Config()}),
                 weights_only=False)
    assert back["a"] is back["b"]
    back["a"].numpy()[0, 1] = 100.0  # the transpose views the same storage
    assert back["t"].numpy()[1, 0] == 100.0


def test_the_pickle_of_an_object_names_torchs_globals_for_tensors():
    blob = _saved({"p": nn.Parameter(tl.ones(2)), "c": Config()})
    pickled = zipfile.ZipFile(io.BytesIO(blob)).read("archive/data.pkl")
    names = {arg for op, arg, _ in pickletools.genops(pickled) if op.name == "GLOBAL"}
    assert {"torch._utils _rebuild_parameter", "torch._utils _rebuild_tensor_v2",
            "torch FloatStorage", f"{__name__} Config"} <= names
    assert not any(name.startswith("tensorlib") for name in names)


def test_a_full_load_runs_the_pickle_as_pickle_would():
    CALLS.clear()
    blob = _saved({"note": _Recorder()})
    with pytest.raises(CheckpointError, match="_record, which a weights-only load refuses"):
        _load(blob)
    assert CALLS == []
    assert _load(blob, weights_only=False) == {"note": None}
    assert CALLS == ["ran"]  # weights_only=False is only for files you trust


CALLS: list[str] = []


class _Recorder:
    def __reduce__(self):
        return (_record, ())


def _record():
    CALLS.append("ran")


def test_a_full_load_passes_the_unpicklers_arguments_and_refuses_what_tensorlib_lacks():
    # protocol 2's bytes of a Python 2 str, read with encoding= as torch.load passes it on
    reader = FullPickleReader(b"\x80\x02U\x02\xe9a.", lambda *a: np.zeros(0), "x.pt",
                              encoding="latin1")
    assert reader.load() == "\xe9a"
    with pytest.raises(CheckpointError, match="PyTorch's torch.cuda.amp.nothing_here, which "
                                              "tensorlib does not have"):
        FullPickleReader(b"\x80\x02ctorch.cuda.amp\nnothing_here\n.", None, "x.pt").load()
    found = FullPickleReader(b"\x80\x02ctorch.nn.modules.linear\nLinear\n.", None, "x").load()
    assert found is nn.Linear
    assert FullPickleReader(b"\x80\x02ctorch\nfloat32\n.", None, "x").load() == tl.float32


# --------------------------------------------------------------------------- with PyTorch


def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parity
def test_a_tensorlib_checkpoint_with_a_dataclass_and_an_ndarray_loads_in_torch(tmp_path):
    torch = _torch()
    tl.save({"config": Config(n_layer=4), "a": np.arange(3.0), "w": tl.ones(2)}, tmp_path / "c.pt")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torch.load(tmp_path / "c.pt")
    back = torch.load(tmp_path / "c.pt", weights_only=False)
    assert back["config"] == Config(n_layer=4) and back["a"].tolist() == [0.0, 1.0, 2.0]
    assert isinstance(back["w"], torch.Tensor) and back["w"].tolist() == [1.0, 1.0]
    tl.save(np.ones((2, 2), np.float32), tmp_path / "a.pt")  # time_sequence_prediction's save
    assert torch.load(tmp_path / "a.pt", weights_only=False).tolist() == [[1.0, 1.0]] * 2


@pytest.mark.parity
def test_a_torch_checkpoint_with_a_dataclass_and_ndarrays_loads_in_tensorlib(tmp_path):
    torch = _torch()
    torch.save({"config": Config(lr=0.5), "data": np.arange(6.0).reshape(2, 3),
                "w": torch.ones(2), "size": torch.Size([2, 3]), "dtype": torch.float32},
               tmp_path / "c.pt")
    with pytest.raises(CheckpointError, match=f"global {__name__}.Config, which a weights-only"):
        tl.load(tmp_path / "c.pt")
    back = tl.load(tmp_path / "c.pt", weights_only=False)
    assert back["config"] == Config(lr=0.5) and back["data"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert isinstance(back["w"], tl.Tensor) and back["w"].tolist() == [1.0, 1.0]
    assert tuple(back["size"]) == (2, 3) and back["dtype"] == tl.float32


@pytest.mark.parity
def test_a_whole_torch_model_loads_as_tensorlib_layers_with_the_same_outputs(tmp_path):
    torch = _torch()
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
        torch.nn.Linear(32, 3), torch.nn.Dropout(0.2), torch.nn.BatchNorm1d(3),
        torch.nn.LayerNorm(3), torch.nn.Tanh(),
    ).eval()
    theirs[5].running_mean.fill_(0.5)
    torch.save(theirs, tmp_path / "m.pt")
    with pytest.raises(CheckpointError, match="global torch.nn.modules.container.Sequential"):
        tl.load(tmp_path / "m.pt")
    ours = tl.load(tmp_path / "m.pt", weights_only=False)
    assert type(ours) is nn.Sequential and type(ours[0]) is nn.Conv2d
    assert type(ours[4]) is nn.Dropout and ours[4].generator is None
    expected = theirs(torch.from_numpy(X)).detach().numpy()
    np.testing.assert_allclose(ours(tl.from_numpy(X)).numpy(), expected, rtol=1e-5, atol=1e-6)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours[5].running_mean.tolist() == [0.5] * 3


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_a_whole_torch_recurrent_layer_is_refused_naming_it(tmp_path, kind):
    torch = _torch()
    torch.save({"rnn": getattr(torch.nn, kind)(2, 3)}, tmp_path / "r.pt")
    with pytest.raises(CheckpointError, match=f"a whole PyTorch {kind}, .*save its state_dict"):
        tl.load(tmp_path / "r.pt", weights_only=False)


@pytest.mark.parity
def test_both_libraries_refuse_a_whole_model_in_a_weights_only_load(tmp_path):
    torch = _torch()
    tl.save(_model(), tmp_path / "ours.pt")
    torch.save(torch.nn.Linear(2, 2), tmp_path / "theirs.pt")
    with pytest.raises(pickle.UnpicklingError):
        torch.load(tmp_path / "ours.pt")
    for path in ("ours.pt", "theirs.pt"):
        with pytest.raises(CheckpointError, match="which a weights-only load refuses"):
            tl.load(tmp_path / path)


# --------------------------------------------------------------------------- the programs


def _run(script: Path, *, as_torch: bool) -> str:
    """``script`` run in its folder, under ``run_as_torch`` or with real torch; its stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    prefix = ["-m", "tensorlib.run_as_torch"] if as_torch else []
    done = subprocess.run([sys.executable, *prefix, str(script)], cwd=script.parent, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


NET = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):  # super_resolution's model: convolutions and a pixel shuffle
        def __init__(self, upscale_factor=2):
            super().__init__()
            self.relu = nn.ReLU()
            self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
            self.conv2 = nn.Conv2d(4, upscale_factor ** 2, 3, padding=1)
            self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        def forward(self, x):
            return self.pixel_shuffle(self.conv2(self.relu(self.conv1(x))))
"""

SAVE_MODEL = """
    import torch
    from netmod import Net

    torch.manual_seed(0)
    model = Net()
    with torch.no_grad():
        for p in model.parameters():  # weights given by a formula: the same in both libraries
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape))
    torch.save(model, "model.pth")  # super_resolution and pytorch_basics save the model whole
    x = torch.linspace(-1, 1, 16).reshape(1, 1, 4, 4)
    print(" ".join(f"{v:.6f}" for v in model(x).flatten().tolist()[:8]))
"""

LOAD_MODEL = """
    import torch

    model = torch.load("model.pth", weights_only=False)  # super_resolve.py's load
    x = torch.linspace(-1, 1, 16).reshape(1, 1, 4, 4)
    print(type(model).__name__, " ".join(f"{v:.6f}" for v in model(x).flatten().tolist()[:8]))
"""


@pytest.mark.parity
@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
@pytest.mark.parametrize("saver", ["tensorlib", "torch"])
def test_a_whole_model_saved_by_one_program_runs_in_another(tmp_path, saver):
    _write(tmp_path, "netmod.py", NET)
    saved = _run(_write(tmp_path, "train.py", SAVE_MODEL), as_torch=saver == "tensorlib")
    loaded = _run(_write(tmp_path, "infer.py", LOAD_MODEL), as_torch=True)
    name, numbers = loaded.split(" ", 1)
    assert name == "Net"
    np.testing.assert_allclose(np.array(numbers.split(), float), np.array(saved.split(), float),
                               atol=2e-6)


NANOGPT = """
    import dataclasses
    import torch


    @dataclasses.dataclass
    class GPTConfig:  # build-nanogpt keeps its settings in a dataclass and saves it whole
        block_size: int = 8
        n_layer: int = 2


    model = torch.nn.Linear(3, 2)
    config = GPTConfig(n_layer=3)
    checkpoint = {"model": model.state_dict(), "config": config, "step": 10, "val_loss": 1.5}
    torch.save(checkpoint, "log.pt")
    back = torch.load("log.pt", weights_only=False)
    fresh = torch.nn.Linear(3, 2)
    fresh.load_state_dict(back["model"])
    print(back["config"], back["step"], torch.equal(fresh.weight, model.weight))
"""


@pytest.mark.parity
@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_build_nanogpts_checkpoint_with_its_dataclass_config(tmp_path):
    script = _write(tmp_path, "train_gpt2.py", NANOGPT)
    expected = "GPTConfig(block_size=8, n_layer=3) 10 True\n"
    assert _run(script, as_torch=True) == expected == _run(script, as_torch=False)


SEQUENCE = """
    import numpy as np
    import torch

    # time_sequence_prediction: generate_sine_wave.py saves an ndarray, train.py loads it
    data = np.sin(np.arange(12, dtype=np.float64).reshape(3, 4) / 4.0)
    torch.save(data, open("traindata.pt", "wb"))
    back = torch.load("traindata.pt", weights_only=False)
    print(type(back).__name__, back.dtype, f"{float(back.sum()):.6f}")
    print(f"{float(torch.from_numpy(back[1:, :-1]).sum()):.6f}")
"""

LOAD_TORCH_ARRAYS = """
    import torch

    data = torch.load("theirs.pt", weights_only=False)  # a file real torch wrote
    print(type(data["input"]).__name__, data["input"].shape, f"{float(data['target'].sum()):.6f}")
"""


@pytest.mark.parity
@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_time_sequence_predictions_ndarray_files(tmp_path):
    torch = _torch()
    script = _write(tmp_path, "generate_sine_wave.py", SEQUENCE)
    assert _run(script, as_torch=True) == _run(script, as_torch=False)
    data = np.arange(6.0).reshape(2, 3)
    torch.save({"input": data, "target": torch.ones(3)}, tmp_path / "theirs.pt")
    loaded = _run(_write(tmp_path, "load.py", LOAD_TORCH_ARRAYS), as_torch=True)
    assert loaded == "ndarray (2, 3) 3.000000\n"


# ------------------------------------------------- PyTorch's environment variables and encoding


class _Opens:
    """An object whose pickle calls ``open(path, "w")``: loading it whole creates the file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.fixture
def _no_force(monkeypatch):
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", raising=False)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    return monkeypatch


@pytest.mark.parametrize("value", ["1", "y", "YES", "True"])
def test_torch_force_weights_only_load_refuses_code_even_with_weights_only_false(
    tmp_path, _no_force, value
):
    marker = tmp_path / "marker"
    tl.save({"payload": _Opens(str(marker))}, tmp_path / "evil.pt")
    _no_force.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", value)
    with pytest.raises(CheckpointError, match="global io.open, which a weights-only"):
        tl.load(tmp_path / "evil.pt", weights_only=False)
    with pytest.raises(RuntimeError, match="explicit pickle_module is specified"):
        tl.load(tmp_path / "evil.pt", pickle_module=pickle)  # forced weights only, as in torch
    assert not marker.exists()
    _no_force.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0")  # a false value: the file runs
    tl.load(tmp_path / "evil.pt", weights_only=False)["payload"].close()
    assert marker.exists()


def test_torch_force_no_weights_only_load_changes_only_the_default(tmp_path, _no_force):
    tl.save({"config": Config(lr=0.5)}, tmp_path / "c.pt")
    _no_force.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the"
                                         "`weights_only` argument was not explicitly passed"):
        assert tl.load(tmp_path / "c.pt") == {"config": Config(lr=0.5)}
    with pytest.raises(CheckpointError, match="which a weights-only load refuses"):
        tl.load(tmp_path / "c.pt", weights_only=True)  # said explicitly: kept
    _no_force.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "yes")
    with pytest.raises(RuntimeError, match="Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set"):
        tl.load(tmp_path / "c.pt")


def _archive_of(pickled: bytes) -> bytes:
    """A torch.save archive holding ``pickled`` as its data.pkl and no storage."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("archive/data.pkl", pickled)
        archive.writestr("archive/byteorder", b"little")
        archive.writestr("archive/version", b"3\n")
    return out.getvalue()


# {"s": Python 2's str of the UTF-8 bytes of "é"}, at protocol 2 (SHORT_BINSTRING)
_PY2_STRING = _archive_of(b"\x80\x02}U\x01sU\x02\xc3\xa9s.")


def test_a_full_load_reads_python_2_strings_as_utf_8_unless_told(_no_force):
    assert _load(_PY2_STRING, weights_only=False) == {"s": "é"}
    assert _load(_PY2_STRING, weights_only=False, encoding="latin1") == {"s": "Ã©"}
    assert FullPickleReader(b"\x80\x02U\x02\xc3\xa9.", None, "x").load() == "é"


@pytest.mark.parity
@pytest.mark.parametrize("weights_only", [False, None])
def test_torch_force_weights_only_load_as_torch(tmp_path, _no_force, weights_only):
    torch = _torch()
    marker = tmp_path / "marker"
    tl.save({"payload": _Opens(str(marker))}, tmp_path / "evil.pt")
    _no_force.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torch.load(tmp_path / "evil.pt", weights_only=weights_only)
    with pytest.raises(CheckpointError, match="io.open"):
        tl.load(tmp_path / "evil.pt", weights_only=weights_only)
    assert not marker.exists()
    _no_force.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    _no_force.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "true")
    if weights_only is None:  # the default becomes a full load in both, with the same warning
        with pytest.warns(UserWarning) as theirs:
            torch.load(_saved_config(tmp_path))
        with pytest.warns(UserWarning) as ours:
            tl.load(_saved_config(tmp_path))
        assert str(ours[0].message) == str(theirs[0].message)
    _no_force.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    for load in (torch.load, tl.load):
        with pytest.raises(RuntimeError, match="Only one of"):
            load(_saved_config(tmp_path), weights_only=weights_only)


def _saved_config(folder: Path) -> Path:
    tl.save({"config": Config()}, folder / "config.pt")
    return folder / "config.pt"


@pytest.mark.parity
def test_python_2_strings_in_a_full_load_as_torch(_no_force):
    torch = _torch()
    for kwargs in ({}, {"encoding": "latin1"}, {"encoding": "bytes"}):
        theirs = torch.load(io.BytesIO(_PY2_STRING), weights_only=False, **kwargs)
        assert _load(_PY2_STRING, weights_only=False, **kwargs) == theirs
