"""Legacy PyTorch spellings (chapter 2, section 34): ``Variable``, ``Tensor.type``, ``Tensor.new``,
``to(..., non_blocking, copy)``, ``cpu(memory_format=)``, ``sort(stable=)`` and ``grad``'s
``only_inputs``, ``materialize_grads`` and ``is_grads_batched``, against torch 2.13, and through
``python -m tensorlib.run_as_torch``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import Variable, grad

ROOT = Path(__file__).resolve().parent.parent
DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _torch():
    return pytest.importorskip("torch")


# Variable


def test_variable_is_a_new_leaf_sharing_memory():
    y = tl.tensor([1.0, 2.0], requires_grad=True) * 2
    v = Variable(y)
    assert v is not y and v.is_leaf and not v.requires_grad and v.grad_fn is None
    w = Variable(y, requires_grad=True)
    assert w.is_leaf and w.requires_grad
    w.data[0] = 5.0
    assert y.tolist() == [5.0, 4.0]
    x = tl.ones(2)
    assert Variable(x, True).requires_grad and not x.requires_grad
    assert Variable().shape == (0,) and Variable().dtype == tl.float32


@pytest.mark.parity
def test_variable_matches_pytorch():
    torch = _torch()
    for lib in (torch, tl):
        V = torch.autograd.Variable if lib is torch else Variable
        x = lib.ones(2)
        v = V(x, requires_grad=True)
        assert v is not x and v.requires_grad and not x.requires_grad and v.is_leaf
        assert isinstance(x, V) and isinstance(v, V) and not isinstance(3, V)
        assert not isinstance(np.ones(2), V)
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            V(x, volatile=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            V(x, volatile=False)
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
            V([1, 2])
        assert tuple(V().shape) == (0,)


# Tensor.type


@pytest.mark.parity
@pytest.mark.parametrize("name", DTYPES)
def test_type_string_matches_pytorch(name):
    torch = _torch()
    values = [0, 1, 2]
    assert tl.tensor(values, dtype=getattr(tl, name)).type() == torch.tensor(
        values, dtype=getattr(torch, name)
    ).type()


@pytest.mark.parity
@pytest.mark.parametrize(
    "target",
    ["torch.LongTensor", "torch.DoubleTensor", "torch.FloatTensor", "torch.BoolTensor",
     "torch.ByteTensor", "LongTensor", "DoubleTensor", "HalfTensor", "Tensor", "float64", "int32"],
)
def test_type_conversion_matches_pytorch(target):
    torch = _torch()
    data = np.array([[1.5, -2.5, 0.0]], dtype=np.float32)
    out = []
    for lib in (torch, tl):
        arg = target if target.startswith("torch.") else getattr(lib, target)
        x = lib.tensor(data)
        y = x.type(arg)
        out.append((str(y.dtype).replace("torch.", ""), np.asarray(y.tolist()), y is x))
    assert out[0][0] == out[1][0] and out[0][2] == out[1][2]
    np.testing.assert_array_equal(out[0][1], out[1][1])


def test_type_is_differentiable_between_floats():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    x.type(tl.DoubleTensor).sum().backward()
    assert x.grad.dtype == tl.float32 and x.grad.tolist() == [1.0, 1.0]


def test_type_errors():
    x = tl.ones(2)
    with pytest.raises(ValueError, match="CPU only.*cuda"):
        x.type("torch.cuda.FloatTensor")
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        x.type("torch.Foo")
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        torch.ones(2).type("torch.Foo")


# Tensor.new


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_new_matches_pytorch(dtype):
    torch = _torch()
    for lib in (torch, tl):
        x = lib.ones(2, dtype=getattr(lib, dtype))
        assert tuple(x.new(2, 3).shape) == (2, 3) and x.new(2, 3).dtype == x.dtype
        assert tuple(x.new(lib.Size([4, 1])).shape) == (4, 1)
        assert tuple(x.new().shape) == (0,) and x.new().dtype == x.dtype
    for data in ([1.5, -2.0], [[1, 2], [3, 4]]):
        a = torch.ones(1, dtype=getattr(torch, dtype)).new(data)
        b = tl.ones(1, dtype=getattr(tl, dtype)).new(data)
        assert str(b.dtype) == str(a.dtype).replace("torch.", "")
        np.testing.assert_array_equal(np.asarray(b.tolist()), np.asarray(a.tolist()))


# to, cpu


@pytest.mark.parity
def test_to_non_blocking_and_copy_match_pytorch():
    torch = _torch()
    for lib in (torch, tl):
        x = lib.ones(2)
        f32, f64 = lib.float32, lib.float64
        assert x.to(f32, non_blocking=True) is x
        assert x.to(f32, True) is x and x.to(f32, False, False) is x
        assert x.to(f32, copy=True) is not x and x.to(f32, False, True) is not x
        assert x.to(x, True, True) is not x and x.to(x, True) is x
        assert x.to("cpu", f64, True, True).dtype == f64
        assert x.to(device="cpu", non_blocking=True, copy=False) is x
        assert x.cpu(memory_format=lib.preserve_format) is x if lib is torch else x.cpu() is x
    assert tl.ones(2).cpu(memory_format=None).tolist() == [1.0, 1.0]


def test_to_copy_is_a_copy_in_the_graph():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x.to(tl.float32, copy=True)
    y.data[0] = 9.0
    assert x.tolist() == [1.0, 2.0]
    (y * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    with pytest.raises(TypeError, match="at most two bools"):
        x.to(tl.float32, True, True, True)


# sort


@pytest.mark.parity
@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable_matches_pytorch(descending):
    torch = _torch()
    data = np.array([[3, 1, 2, 1, 3], [0, 0, 5, -1, 0]], dtype=np.float64)
    a = torch.sort(torch.tensor(data), dim=-1, descending=descending, stable=True)
    b = tl.sort(tl.tensor(data), dim=-1, descending=descending, stable=True)
    c = tl.tensor(data).sort(descending=descending, stable=True)
    for got in (b, c):
        np.testing.assert_array_equal(got.values.numpy(), a.values.numpy())
        np.testing.assert_array_equal(got.indices.numpy(), a.indices.numpy())


# grad's legacy keywords


@pytest.mark.parity
def test_grad_only_inputs_matches_pytorch():
    torch = _torch()
    for lib, g in ((torch, torch.autograd.grad), (tl, grad)):
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            (ga,) = g((a * a).sum(), a, only_inputs=True)
        assert ga.tolist() == [2.0, 4.0]
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
            (ga,) = g((a * a).sum(), a, only_inputs=False)
        assert ga.tolist() == [2.0, 4.0]


@pytest.mark.parity
def test_grad_materialize_grads_matches_pytorch():
    torch = _torch()
    for lib, g in ((torch, torch.autograd.grad), (tl, grad)):
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
        ga, gb = g((a * a).sum(), (a, b), materialize_grads=True)
        assert ga.tolist() == [2.0, 4.0] and gb.tolist() == [0.0] and gb.dtype == lib.float64
        with pytest.raises(ValueError, match="Expected allow_unused to be True"):
            g((a * a).sum(), (a, b), materialize_grads=True, allow_unused=False)
        assert g((a * a).sum(), (a, b), allow_unused=True)[1] is None


def test_grad_is_grads_batched_is_refused():
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="is_grads_batched=True is not supported"):
        grad(a * 2, a, tl.eye(2), is_grads_batched=True)


# through run_as_torch


def test_legacy_spellings_run_as_torch(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent("""
        import torch
        from torch.autograd import Variable
        x = Variable(torch.ones(2, 3), requires_grad=True)
        assert isinstance(x, Variable) and isinstance(x, torch.Tensor)
        assert x.type() == 'torch.FloatTensor'
        y = x.type(torch.Tensor)
        assert y.dtype == torch.float32
        z = x.type(torch.DoubleTensor).to('cpu', non_blocking=True)
        labels = Variable(torch.LongTensor([1, 0]))
        assert labels.type() == 'torch.LongTensor' and x.new(4).shape == (4,)
        (ga,) = torch.autograd.grad((z * z).sum(), x, only_inputs=True)
        print('ok', tuple(ga.shape), str(ga.dtype))
    """), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "tensorlib.run_as_torch", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok (2, 3) float32"


# set_printoptions


@pytest.fixture
def restore_print_options():
    yield
    tl.set_printoptions(profile="default")
    torch = pytest.importorskip("torch")
    torch.set_printoptions(profile="default")


@pytest.mark.parity
@pytest.mark.parametrize(
    "options",
    [{}, {"precision": 2}, {"precision": 6}, {"sci_mode": True},
     {"precision": 3, "sci_mode": False}, {"profile": "short"}, {"profile": "full"},
     {"profile": "default"}],
)
def test_set_printoptions_matches_pytorch(options, restore_print_options):
    torch = _torch()
    data = [[1.123456, 2e-6, 300.5], [-4.0, 0.25, 1e3]]
    tl.set_printoptions(**options)
    torch.set_printoptions(**options)
    # what set_printoptions leaves unset comes from numpy's options, which other tests (the
    # chapter replays: chapter 2 sets suppress=True) may have changed in this process: numpy's
    # defaults here
    with np.printoptions(suppress=False, precision=8, threshold=1000, edgeitems=3, linewidth=75):
        assert repr(tl.tensor(data)) == repr(torch.tensor(data))
        assert repr(tl.arange(4.0)) == repr(torch.arange(4.0))  # one line in 75 columns and 80


def test_set_printoptions_summarises_and_leaves_numpy_alone(restore_print_options):
    before = np.get_printoptions()
    tl.set_printoptions(threshold=5, edgeitems=2, linewidth=40, precision=1)
    assert repr(tl.arange(10.0)) == "tensor([0., 1., ..., 8., 9.])"
    assert np.get_printoptions() == before
    tl.set_printoptions(profile="full")
    assert "..." not in repr(tl.arange(2000.0))
    tl.set_printoptions(profile="default")
    assert repr(tl.tensor([1.123456])) == "tensor([1.1235])"
    with pytest.raises(ValueError, match="profile must be 'default', 'short' or 'full'"):
        tl.set_printoptions(profile="long")
