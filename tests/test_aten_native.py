"""Chapter 4, section 11.7: PyTorch's kernels under the layer functions (tl.native_layer_norm,
tl.native_batch_norm, tl.native_group_norm, tl.native_dropout, tl.convolution,
tl.embedding_renorm_, tl.norm_except_dim) and torch.nn.grad (tl.nn.grad.conv1d_input ...
conv3d_weight): float64 values and gradients against torch 2.13, float64 gradchecks, bad input."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck

RNG = np.random.default_rng(12)


def _data(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


# name -> (arrays that get gradients, the call taking the module `m`); outputs compared in full
CASES = {
    "native_layer_norm": (
        [_data(4, 3, 5), _data(5), _data(5)],
        lambda m, x, w, b: m.native_layer_norm(x, [5], w, b, 1e-5),
    ),
    "native_layer_norm_2d_no_affine": (
        [_data(2, 3, 4)], lambda m, x: m.native_layer_norm(x, [3, 4], None, None, 1e-3),
    ),
    "native_group_norm": (
        [_data(2, 6, 4), _data(6), _data(6)],
        lambda m, x, w, b: m.native_group_norm(x, w, b, 2, 6, 4, 3, 1e-5),
    ),
    "native_group_norm_4d": (
        [_data(2, 4, 2, 3)], lambda m, x: m.native_group_norm(x, None, None, 2, 4, 6, 2, 1e-5),
    ),
    "native_batch_norm_train": (
        [_data(4, 3, 5), _data(3), _data(3)],
        lambda m, x, w, b: m.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
    ),
    "convolution_1d": (
        [_data(2, 4, 9), _data(6, 2, 3), _data(6)],
        lambda m, x, w, b: m.convolution(x, w, b, [2], [1], [2], False, [0], 2),
    ),
    "convolution_2d": (
        [_data(1, 2, 6, 5), _data(3, 2, 3, 2)],
        lambda m, x, w: m.convolution(x, w, None, [1, 2], [1, 0], [1], False, [0], 1),
    ),
    "convolution_3d": (
        [_data(1, 2, 4, 4, 3), _data(2, 2, 2, 2, 2), _data(2)],
        lambda m, x, w, b: m.convolution(x, w, b, [1], [1], [1], False, [0], 1),
    ),
    "convolution_transposed_1d": (
        [_data(1, 2, 5), _data(2, 3, 2), _data(3)],
        lambda m, x, w, b: m.convolution(x, w, b, [2], [1], [1], True, [1], 1),
    ),
    "convolution_transposed_2d_groups": (
        [_data(1, 4, 3, 3), _data(4, 1, 2, 2)],
        lambda m, x, w: m.convolution(x, w, None, [2], [0], [1], True, [1], 2),
    ),
    "norm_except_dim_0": ([_data(3, 4)], lambda m, v: m.norm_except_dim(v, 2, 0)),
    "norm_except_dim_1_pow3": ([_data(2, 3, 4)], lambda m, v: m.norm_except_dim(v, 3, 1)),
    "norm_except_dim_all": ([_data(2, 3)], lambda m, v: m.norm_except_dim(v, 2, -1)),
    "norm_except_dim_negative": ([_data(2, 3)], lambda m, v: m.norm_except_dim(v, 2, -2)),
}


def _first(result):
    return result[0] if isinstance(result, tuple) else result


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradcheck(case: str) -> None:
    arrays, call = CASES[case]
    tensors = tuple(tl.tensor(a, requires_grad=True) for a in arrays)
    assert gradcheck(lambda *ts: _first(call(tl, *ts)), tensors)


@pytest.mark.parity
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_pytorch(case: str) -> None:
    torch = pytest.importorskip("torch")
    arrays, call = CASES[case]
    ours = [tl.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_ours, out_theirs = call(tl, *ours), call(torch, *theirs)
    if not isinstance(out_theirs, tuple):
        out_ours, out_theirs = (out_ours,), (out_theirs,)
    assert len(out_ours) == len(out_theirs)
    for a, b in zip(out_ours, out_theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    weight = _data(*out_theirs[0].shape)
    (out_ours[0] * tl.tensor(weight)).sum().backward()
    (out_theirs[0] * torch.tensor(weight)).sum().backward()
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parity
def test_native_batch_norm_running_estimates_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    x = _data(5, 3, 4)
    stats = [np.zeros(3), np.ones(3)]
    ours = [tl.tensor(s.copy()) for s in stats]
    theirs = [torch.tensor(s.copy()) for s in stats]
    tl.native_batch_norm(tl.tensor(x), None, None, *ours, True, 0.2, 1e-5)
    torch.native_batch_norm(torch.tensor(x), None, None, *theirs, True, 0.2, 1e-5)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    out, mean, invstd = tl.native_batch_norm(tl.tensor(x), None, None, *ours, False, 0.2, 1e-5)
    expected = torch.native_batch_norm(torch.tensor(x), None, None, *theirs, False, 0.2, 1e-5)
    np.testing.assert_allclose(out.numpy(), expected[0].numpy(), rtol=1e-12)
    assert tuple(mean.shape) == tuple(invstd.shape) == tuple(expected[1].shape) == (0,)


def test_native_dropout() -> None:
    tl.manual_seed(1)
    x = tl.tensor(_data(50, 40), requires_grad=True)
    out, mask = tl.native_dropout(x, 0.3, True)
    assert mask.dtype == np.bool_
    np.testing.assert_allclose(out.numpy(), np.where(mask.numpy(), x.numpy() / 0.7, 0.0))
    assert 0.6 < mask.numpy().mean() < 0.8
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), mask.numpy() / 0.7)
    same, all_kept = tl.native_dropout(x, 0.3, False)
    assert same is not x and np.array_equal(same.numpy(), x.numpy()) and all_kept.numpy().all()
    _, drawn = tl.native_dropout(x, 0.3, None)  # None means training
    assert not drawn.numpy().all()


@pytest.mark.parity
def test_native_dropout_eval_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    x = _data(3, 4)
    ours = tl.native_dropout(tl.tensor(x), 0.5, False)
    theirs = torch.native_dropout(torch.tensor(x), 0.5, False)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.numpy().dtype and np.array_equal(a.numpy(), b.numpy())


@pytest.mark.parity
def test_embedding_renorm_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    table = _data(6, 4) * 2
    ours, theirs = tl.tensor(table.copy()), torch.tensor(table.copy())
    assert tl.embedding_renorm_(ours, tl.tensor([0, 2, 2, 5]), 1.5, 1.0) is ours
    torch.embedding_renorm_(theirs, torch.tensor([0, 2, 2, 5]), 1.5, 1.0)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    leaf = tl.ones(3, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        tl.embedding_renorm_(leaf, tl.tensor([0]), 1.0, 2.0)
    with tl.no_grad():
        tl.embedding_renorm_(leaf, tl.tensor([0]), 1.0, 2.0)
    assert abs(float(np.linalg.norm(leaf.numpy()[0])) - 1.0) < 1e-6


# dims -> (input shape, weight shape, stride, padding, dilation, groups)
GRAD_CASES = {
    1: ((2, 4, 10), (6, 2, 3), 2, 1, 2, 2),
    2: ((2, 2, 7, 6), (3, 2, 3, 2), (2, 1), (1, 0), (1, 2), 1),
    3: ((1, 2, 5, 4, 5), (2, 1, 2, 2, 3), 2, 1, 1, 2),
}


@pytest.mark.parity
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_nn_grad_matches_pytorch(dims: int) -> None:
    torch = pytest.importorskip("torch")
    import torch.nn.grad as torch_grad

    x_shape, w_shape, stride, padding, dilation, groups = GRAD_CASES[dims]
    x, w = _data(*x_shape), _data(*w_shape)
    conv = getattr(torch.nn.functional, f"conv{dims}d")
    y = conv(torch.tensor(x), torch.tensor(w), None, stride, padding, dilation, groups)
    g = _data(*y.shape)
    args = (stride, padding, dilation, groups)
    theirs_x = getattr(torch_grad, f"conv{dims}d_input")(x_shape, torch.tensor(w),
                                                         torch.tensor(g), *args)
    theirs_w = getattr(torch_grad, f"conv{dims}d_weight")(torch.tensor(x), w_shape,
                                                          torch.tensor(g), *args)
    ours_x = getattr(tl.nn.grad, f"conv{dims}d_input")(x_shape, tl.tensor(w), tl.tensor(g), *args)
    ours_w = getattr(tl.nn.grad, f"conv{dims}d_weight")(tl.tensor(x), w_shape, tl.tensor(g), *args)
    np.testing.assert_allclose(ours_x.numpy(), theirs_x.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours_w.numpy(), theirs_w.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dims", [1, 2])
def test_nn_grad_gradcheck(dims: int) -> None:
    x_shape, w_shape, stride, padding, dilation, groups = GRAD_CASES[dims]
    x, w = (tl.tensor(_data(*s), requires_grad=True) for s in (x_shape, w_shape))
    conv = getattr(tl.nn.functional, f"conv{dims}d")
    g_shape = conv(x, w, None, stride, padding, dilation, groups).shape
    g = tl.tensor(_data(*g_shape), requires_grad=True)
    args = (stride, padding, dilation, groups)
    assert gradcheck(lambda w_, g_: getattr(tl.nn.grad, f"conv{dims}d_input")(
        x_shape, w_, g_, *args), (w, g))
    assert gradcheck(lambda x_, g_: getattr(tl.nn.grad, f"conv{dims}d_weight")(
        x_, w_shape, g_, *args), (x, g))


def test_bad_input() -> None:
    with pytest.raises(RuntimeError, match="Expected 3-dimensional input for 3-dimensional"):
        tl.convolution(tl.randn(2, 5), tl.randn(3, 2, 2), None, [1], [0], [1], False, [0], 1)
    with pytest.raises(RuntimeError, match="native_group_norm: N=2, C=6, HxW=5"):
        tl.native_group_norm(tl.randn(2, 6, 4), None, None, 2, 6, 5, 3, 1e-5)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        tl.native_batch_norm(tl.randn(2, 3), None, None, None, None, False, 0.1, 1e-5)
    with pytest.raises(IndexError, match="dim out of range"):
        tl.norm_except_dim(tl.randn(2, 3), 2, 2)
    with pytest.raises(ValueError, match="dropout probability p must be in"):
        tl.native_dropout(tl.randn(2), 1.5, True)
    with pytest.raises(ValueError, match="conv2d_input: expected input_size and grad_output"):
        tl.nn.grad.conv2d_input((1, 2, 5), tl.randn(3, 2, 2, 2), tl.randn(1, 3, 4, 4))


@pytest.mark.parity
def test_common_types_match_pytorch() -> None:
    pytest.importorskip("torch")
    import typing

    import torch.nn.common_types as theirs

    from tensorlib.nn import common_types as ours

    names = [n for n in dir(theirs) if n.startswith("_") and n.endswith("_t") and n != "_t"]
    assert names and all(hasattr(ours, n) for n in names)

    def shape(alias):  # the structure with element types named, Tensor as "Tensor"
        args = typing.get_args(alias)
        if not args:
            return getattr(alias, "__name__", repr(alias))
        return (typing.get_origin(alias).__name__ if typing.get_origin(alias) else "?",
                tuple(shape(a) for a in args))

    for name in names:
        assert shape(getattr(ours, name)) == shape(getattr(theirs, name)), name


def test_new_names_under_run_as_torch(tmp_path) -> None:
    import os
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent("""
        import torch
        import torch.nn as nn
        from torch.nn.common_types import _size_2_t
        from torch.nn.grad import conv2d_input, conv2d_weight
        from torch.nn.parallel import DataParallel
        x = torch.randn(1, 2, 5, 5)
        w = torch.randn(3, 2, 2, 2)
        print(tuple(conv2d_input(x.shape, w, torch.ones(1, 3, 4, 4)).shape))
        print(tuple(torch.convolution(x, w, None, [1], [0], [1], False, [0], 1).shape))
        out, mean, rstd = torch.native_layer_norm(x, [5, 5], None, None, 1e-5)
        print(tuple(mean.shape))
        layer = nn.GRU(5, 4)
        seq = torch.randn(3, 2, 5)
        print(tuple(torch.gru(seq, torch.zeros(1, 2, 4), list(layer.parameters()), True, 1, 0.0,
                              False, False, False)[0].shape))
        print(list(DataParallel(nn.Linear(2, 2)).state_dict()))
    """), encoding="utf-8")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-m", "tensorlib.run_as_torch", str(script)], cwd=tmp_path,
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)}, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:5] == [
        "(1, 2, 5, 5)", "(1, 3, 4, 4)", "(1, 2, 1, 1)", "(3, 2, 4)",
        "['module.weight', 'module.bias']",
    ]


# nn.grad checks the shapes it is given: a grad_output of another size than the convolution's
# output, or an input whose channels do not match the weight's, raises (PyTorch raises too)
@pytest.mark.parity
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_nn_grad_refuses_a_grad_output_of_the_wrong_size(dims: int) -> None:
    torch = pytest.importorskip("torch")
    x_shape, w_shape = (2, 4) + (7,) * dims, (6, 2) + (3,) * dims
    out = (2, 6) + (3,) * dims  # stride 2, padding 1: floor((7 + 2 - 2 - 1) / 2) + 1 = 4; -1
    rng = np.random.default_rng(dims)
    x, w, g = (rng.normal(size=s) for s in (x_shape, w_shape, out))
    for lib in (torch, tl):
        grad = getattr(lib.nn.grad, f"conv{dims}d_weight")
        with pytest.raises(RuntimeError):
            grad(lib.tensor(x), w_shape, lib.tensor(g), 2, 1, 1, 2)
        grad = getattr(lib.nn.grad, f"conv{dims}d_input")
        with pytest.raises(RuntimeError):
            grad(x_shape, lib.tensor(w), lib.tensor(g), 2, 1, 1, 2)
    expected = (2, 6) + (4,) * dims
    with pytest.raises(RuntimeError, match=re.escape(f"expected grad_output of shape {expected}")):
        getattr(tl.nn.grad, f"conv{dims}d_weight")(tl.tensor(x), w_shape, tl.tensor(g), 2, 1, 1, 2)
    with pytest.raises(RuntimeError, match=re.escape(f"but got {out}")):
        getattr(tl.nn.grad, f"conv{dims}d_input")(x_shape, tl.tensor(w), tl.tensor(g), 2, 1, 1, 2)


@pytest.mark.parity
def test_nn_grad_checks_channels_as_pytorch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, g = rng.normal(size=(2, 4, 8, 8)), rng.normal(size=(2, 6, 6, 6))
    w = rng.normal(size=(6, 4, 3, 3))
    for call in (
        lambda lib: lib.nn.grad.conv2d_weight(lib.tensor(x), (6, 3, 3, 3), lib.tensor(g)),
        lambda lib: lib.nn.grad.conv2d_input((2, 3, 8, 8), lib.tensor(w), lib.tensor(g)),
        lambda lib: lib.nn.grad.conv2d_input((2, 4, 8, 8), lib.tensor(w), lib.tensor(g), groups=2),
    ):
        with pytest.raises(RuntimeError) as theirs:
            call(torch)
        with pytest.raises(RuntimeError, match=re.escape(str(theirs.value))):
            call(tl)


@pytest.mark.parity
def test_native_batch_norm_of_an_empty_input_in_training_is_refused_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, tl):
        x = lib.zeros(2, 4, 0)
        mean, var = lib.zeros(4), lib.ones(4)
        with pytest.raises(RuntimeError, match=r"input tensor must have at least one element, "
                           r"but got input_sizes = \[2, 4, 0\]"):
            lib.native_batch_norm(x, None, None, mean, var, True, 0.1, 1e-5)
        assert mean.tolist() == [0.0] * 4 and var.tolist() == [1.0] * 4  # left alone
        out = lib.native_batch_norm(x, None, None, mean, var, False, 0.1, 1e-5)
        assert [tuple(t.shape) for t in out] == [(2, 4, 0), (0,), (0,)]
