"""Chapter 2's in-place family (section 22.4, ``apply_``), the slice writers (section 19.2:
index_add, index_copy, index_fill, masked_scatter), as_tensor, Tensor.where, and the small Tensor
methods real programs call (new_full, new_empty, stride, element_size, nbytes, itemsize, short,
char, byte, positive, negative), against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

IN_PLACE = [
    ("exp_", ()), ("log_", ()), ("log1p_", ()), ("expm1_", ()), ("sqrt_", ()), ("rsqrt_", ()),
    ("abs_", ()), ("neg_", ()), ("negative_", ()), ("sigmoid_", ()), ("tanh_", ()), ("relu_", ()),
    ("sin_", ()), ("cos_", ()), ("tan_", ()), ("floor_", ()), ("ceil_", ()), ("trunc_", ()),
    ("frac_", ()), ("sign_", ()), ("reciprocal_", ()), ("square_", ()), ("erf_", ()),
    ("pow_", (3,)), ("clip_", (0.2, 0.8)), ("clamp_min_", (0.5,)), ("clamp_max_", (0.5,)),
    ("fmod_", (0.3,)), ("remainder_", (0.3,)),
]


def _positive(lib):
    return lib.tensor([0.25, 0.5, 1.5, 2.0], dtype=lib.float64)


@pytest.mark.parity
@pytest.mark.parametrize("name, args", IN_PLACE, ids=[c[0] for c in IN_PLACE])
def test_in_place_forms_match_pytorch(name, args):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        x = _positive(lib)
        out = getattr(x, name)(*args)
        assert out is x
        results.append(x.numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-15)


@pytest.mark.parity
def test_in_place_forms_with_tensor_arguments_match_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        x = _positive(lib)
        x.lerp_(lib.tensor([1.0, 0.0, 1.0, 0.0], dtype=lib.float64), 0.25)
        x.addcmul_(x, x, value=0.5).addcdiv_(x, x + 1, value=2.0)
        x.atan2_(lib.tensor(0.5, dtype=lib.float64)).hypot_(x).round_(decimals=3)
        x.nan_to_num_()
        y = lib.zeros(3, 2, dtype=lib.float64)
        y.index_add_(0, lib.tensor([0, 2, 0]), lib.ones(3, 2, dtype=lib.float64), alpha=2.0)
        y.index_fill_(1, lib.tensor([1]), -1.0)
        z = lib.zeros(2, 3, dtype=lib.float64)
        source = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)
        z.index_copy_(1, lib.tensor([2, 0]), source)
        m = lib.zeros(2, 3, dtype=lib.float64)
        m.masked_scatter_(lib.tensor([[True, False, True], [False, True, False]]),
                          lib.arange(1.0, 7.0, dtype=lib.float64))
        results.append([x.numpy().copy(), y.numpy().copy(), z.numpy().copy(), m.numpy().copy()])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_in_place_refusals():
    with pytest.raises(RuntimeError, match="can't be cast"):
        tl.tensor([1, 2]).exp_()
    x = tl.tensor([1, 2])
    version = x._version
    with pytest.raises(RuntimeError):
        x.sqrt_()
    assert x.tolist() == [1, 2] and x._version == version  # nothing written
    leaf = tl.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.exp_()
    w, end = tl.zeros(2), tl.ones(2, requires_grad=True)
    w.lerp_(end, 0.5)  # a plain tensor written with a value that needs a gradient joins the graph
    w.sum().backward()
    assert w.grad_fn is not None and end.grad.tolist() == [0.5, 0.5]
    with tl.no_grad():
        leaf.mul_(2).sigmoid_()
    assert leaf._version == 2


@pytest.mark.parity
def test_slice_writers_values_and_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a0, s0 = rng.standard_normal((2, 4)), rng.standard_normal((2, 3))
    mask = np.array([[True, False, True, False], [False, True, True, True]])
    results = []
    for lib in (tl, torch):
        a = lib.tensor(a0, requires_grad=True)
        s = lib.tensor(s0, requires_grad=True)
        outs = [
            lib.index_add(a, 1, lib.tensor([2, 0, 2]), s, alpha=2.0),
            a.index_copy(1, lib.tensor([3, 1, 0]), s),
            lib.index_fill(a, 1, lib.tensor([0, 2]), 1.5),
            a.masked_scatter(lib.tensor(mask), s),
        ]
        total = sum((o * lib.tensor(rng.standard_normal((2, 4)) * 0 + k + 1)).sum()
                    for k, o in enumerate(outs))
        total.backward()
        results.append(([o.detach().numpy() for o in outs], a.grad.numpy(), s.grad.numpy()))
    (ours, oa, os_), (theirs, ta, ts) = results
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-12)
    np.testing.assert_allclose(oa, ta, rtol=1e-12)
    np.testing.assert_allclose(os_, ts, rtol=1e-12)


def test_slice_writer_errors():
    with pytest.raises(RuntimeError, match="entries"):
        tl.index_add(tl.zeros(3), 0, tl.tensor([0, 1]), tl.ones(3))
    with pytest.raises(TypeError, match="integer"):
        tl.index_copy(tl.zeros(3), 0, tl.tensor([0.0]), tl.ones(1))
    with pytest.raises(RuntimeError, match="only"):
        tl.masked_scatter(tl.zeros(3), tl.tensor([True, True, True]), tl.ones(2))


@pytest.mark.parity
def test_small_methods_match_pytorch():
    torch = pytest.importorskip("torch")
    answers = []
    for lib in (tl, torch):
        x = lib.ones(2, 3)
        answers.append([
            tuple(x.stride()), x.t().stride(), x.stride(-1), x.element_size(), x.nbytes,
            x.itemsize, x.new_full((2,), 5.0).tolist(), tuple(x.new_empty(2, 2).shape),
            str(x.new_full((1,), 2, dtype=lib.float64).dtype).split(".")[-1],
            str(x.short().dtype).split(".")[-1], str(x.char().dtype).split(".")[-1],
            str(x.byte().dtype).split(".")[-1], x.positive().tolist(), x.negative().tolist(),
            lib.negative(x).tolist(), x.where(x > 2, lib.zeros(2, 3)).tolist(),
        ])
    assert answers[0] == answers[1]


@pytest.mark.parity
def test_as_tensor_shares_what_pytorch_shares():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        array = np.zeros(3)
        shared = lib.as_tensor(array)
        array[0] = 1.0
        assert shared.tolist() == [1.0, 0.0, 0.0]
        copied = lib.as_tensor(array, dtype=lib.float32)
        array[1] = 1.0
        assert copied.tolist() == [1.0, 0.0, 0.0]
        t = lib.tensor([1.0, 2.0], requires_grad=True)
        assert lib.as_tensor(t) is t
        assert lib.as_tensor(t, dtype=lib.float64).grad_fn is not None
        assert lib.as_tensor([1, 2]).dtype == lib.int64
    assert isinstance(tl.float32, tl.dtype) and isinstance(torch.float32, torch.dtype)
