"""Tensor functions PyTorch programs use: pow, roll, flip, mm, narrow, nelement, inference_mode,
set_default_device, bfloat16 (refused clearly), is_floating_point; parity with torch and float64
gradchecks."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(0)


def leaf(*shape):
    return tl.tensor(RNG.normal(size=shape), requires_grad=True)


# -- gradchecks (float64) --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda a: tl.pow(a, 3), [(3, 4)]),
        (lambda a: tl.pow(2.0, a), [(3, 4)]),
        (lambda a, b: tl.pow(a.abs() + 0.5, b), [(3, 4), (4,)]),
        (lambda a: tl.roll(a, 1), [(3, 4)]),
        (lambda a: tl.roll(a, (1, -2), (0, 1)), [(3, 4)]),
        (lambda a: a.roll(-1, dims=-1), [(2, 3, 4)]),
        (lambda a: tl.flip(a, [0, 2]), [(2, 3, 4)]),
        (lambda a: a.flip(1), [(2, 3)]),
        (lambda a: a.flip(-1, 0), [(2, 3)]),
        (lambda a, b: a.mm(b), [(3, 4), (4, 2)]),
        (lambda a, b: tl.mm(a, b), [(1, 1), (1, 5)]),
        (lambda a: a.narrow(1, 1, 2), [(3, 4)]),
        (lambda a: tl.narrow(a, 0, -2, 2), [(3, 4)]),
    ],
)
def test_gradcheck(fn, shapes):
    assert tl.autograd.gradcheck(fn, tuple(leaf(*s) for s in shapes))


# -- parity ---------------------------------------------------------------------------------------
CASES = [
    ("pow tensor scalar", lambda lib, a: lib.pow(a, 2)),
    ("pow scalar tensor", lambda lib, a: lib.pow(3.0, a)),
    ("roll flat", lambda lib, a: lib.roll(a, 5)),
    ("roll flat negative", lambda lib, a: lib.roll(a, -7)),
    ("roll dims", lambda lib, a: lib.roll(a, (1, 2), (0, 1))),
    ("roll one dim", lambda lib, a: a.roll(1, 0)),
    ("roll same dim twice", lambda lib, a: lib.roll(a, (1, 1), (1, 1))),
    ("flip list", lambda lib, a: lib.flip(a, [0, 1])),
    ("flip tuple", lambda lib, a: a.flip((1,))),
    ("flip varargs", lambda lib, a: a.flip(1, 0)),
    ("flip negative", lambda lib, a: a.flip(-1)),
    ("mm", lambda lib, a: a.mm(a.T)),
    ("narrow", lambda lib, a: a.narrow(1, 1, 3)),
    ("narrow negative start", lambda lib, a: lib.narrow(a, 0, -1, 1)),
    ("narrow empty", lambda lib, a: a.narrow(1, 2, 0)),
]


@pytest.mark.parity
@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, fn):
    torch = pytest.importorskip("torch")
    values = RNG.normal(size=(3, 4))
    out_tl, out_torch = [], []
    for lib, store in ((tl, out_tl), (torch, out_torch)):
        a = lib.tensor(values, requires_grad=True)
        y = fn(lib, a)
        weights = lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))
        (y * weights).sum().backward()
        store += [y.detach().numpy().copy(), a.grad.numpy().copy()]
    for ours, theirs in zip(out_tl, out_torch, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parity
def test_copies_views_and_errors_match_torch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        a = lib.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
        assert a.nelement() == 6 == a.numel()
        narrowed = a.narrow(1, 1, 2)
        narrowed[0, 0] = 10.0  # a view: writes through
        assert a[0, 1].item() == 10.0
        flipped, rolled = a.flip(0), a.roll(1)
        flipped[0, 0] = -1.0
        rolled[0, 0] = -1.0  # copies: the source is unchanged
        assert a[1, 0].item() == 3.0 and a[1, 2].item() == 5.0
        with pytest.raises(RuntimeError):
            a.narrow(1, 2, 2)
        with pytest.raises(RuntimeError):
            a.mm(a)
        with pytest.raises(RuntimeError):
            lib.tensor([1.0, 2.0]).mm(lib.tensor([[1.0]]))
        with pytest.raises(RuntimeError):
            lib.roll(a, (1, 2), (0,))
        assert lib.is_floating_point(a) and not lib.is_floating_point(lib.tensor([1]))
        assert (
            lib.bfloat16.is_floating_point
            and lib.bfloat16.itemsize == 2
            and not lib.bfloat16.is_complex
        )
        assert a.dtype != lib.bfloat16


def test_error_messages():
    a = tl.ones(2, 3)
    with pytest.raises(
        RuntimeError, match=r"start \(2\) \+ length \(2\) exceeds dimension size \(3\)"
    ):
        a.narrow(1, 2, 2)
    with pytest.raises(IndexError, match="out of range"):
        a.narrow(1, 5, 0)
    with pytest.raises(
        RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"
    ):
        a.mm(a)
    with pytest.raises(RuntimeError, match="self must be a matrix"):
        tl.ones(3).mm(a)
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        tl.roll(a, (1, 2), 0)
    with pytest.raises(RuntimeError, match="more than once"):
        a.flip(0, 0)


# -- inference_mode -------------------------------------------------------------------------------
def test_inference_mode_context_and_decorators():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    with tl.inference_mode():
        y = x * 2
        assert not tl.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and tl.is_grad_enabled()

    @tl.inference_mode()
    def called():
        return (x * 2).requires_grad

    @tl.inference_mode
    def bare():
        return (x * 2).requires_grad

    assert called() is False and bare() is False and called() is False and tl.is_grad_enabled()
    with tl.inference_mode(False):
        assert (x * 2).requires_grad
    with tl.no_grad(), tl.inference_mode(False):
        assert not tl.is_grad_enabled(), "inference_mode(False) leaves grad mode as it is"
    assert tl.is_grad_enabled()


@pytest.mark.parity
def test_inference_mode_matches_torch():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (tl, torch):
        x = lib.tensor([1.0], requires_grad=True)
        with lib.inference_mode():
            a = (x * 2).requires_grad
        with lib.inference_mode(mode=False):
            b = (x * 2).requires_grad
        seen.append((a, b, lib.is_grad_enabled()))
    assert seen[0] == seen[1]


# -- devices and bfloat16 -------------------------------------------------------------------------
def test_set_default_device():
    tl.set_default_device("cpu")
    tl.set_default_device(tl.device("cpu"))
    tl.set_default_device(None)
    assert tl.get_default_device() == "cpu" and tl.zeros(1).device == "cpu"
    for other in ("cuda", "mps", "cuda:0"):
        with pytest.raises(ValueError, match="CPU only"):
            tl.set_default_device(other)


@pytest.mark.parametrize(
    "make",
    [
        lambda: tl.tensor([1.0], dtype=tl.bfloat16),
        lambda: tl.zeros(2, dtype=tl.bfloat16),
        lambda: tl.ones(2).to(tl.bfloat16),
        lambda: tl.ones(2).to(dtype=tl.bfloat16),
        lambda: tl.ones(2).bfloat16(),
        lambda: np.dtype(tl.bfloat16),
    ],
)
def test_bfloat16_is_refused_clearly(make):
    with pytest.raises(TypeError, match="tensorlib has no bfloat16.*use float16.*or float32"):
        make()


def test_bfloat16_queries():
    assert repr(tl.bfloat16) == "tensorlib.bfloat16"
    assert tl.bfloat16.is_floating_point and tl.bfloat16.is_signed and tl.bfloat16.itemsize == 2
    assert tl.float32 != tl.bfloat16 and tl.bfloat16 != tl.float16
