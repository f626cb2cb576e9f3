"""Chapter 2, section 20.5: PyTorch's other names, the inverse hyperbolic functions, writing and
reducing into a copy (``*_scatter``, ``index_put``, ``scatter_reduce``), compositions, ops without
a gradient, windows and the in-place forms: values and gradients against PyTorch's, float64
gradchecks, in-place checks and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(0)
A, B = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
SRC = RNG.standard_normal((3, 3))
INDEX = np.array([[0, 1, 3], [3, 3, 0], [0, 2, 3]])
ZEROS = np.array([[0.0, 2.0, 1.5], [0.0, 0.0, -1.0], [3.0, 0.0, 2.0]])
TIES = np.array([[1.0, 2.0, 0.5], [1.0, 2.0, 0.5], [0.25, 2.0, 0.5]])

CASES = {
    "asinh": lambda L, a, b: L.asinh(a) + L.arcsinh(b),
    "acosh": lambda L, a, b: L.acosh(a * a + 1.5) * L.arccosh(b.abs() + 1.1),
    "atanh": lambda L, a, b: L.atanh(L.tanh(a) * 0.9) + L.arctanh(b.tanh() * 0.5),
    "methods": lambda L, a, b: a.asinh() + b.acosh().nan_to_num() + a.tanh().atanh(),
    "subtract-multiply": lambda L, a, b: L.subtract(a, b, alpha=2) * L.multiply(a, b),
    "divide": lambda L, a, b: L.divide(a, b.abs() + 1) + a.divide(2.0) + a.subtract(b),
    "rsub": lambda L, a, b: L.rsub(a, b, alpha=3),
    "absolute-moveaxis": lambda L, a, b: L.moveaxis(L.absolute(a).reshape(2, 2, 3), 0, 2),
    "inner": lambda L, a, b: L.inner(a, b),
    "inner-0d": lambda L, a, b: L.inner(a[0, 0], b),
    "ger": lambda L, a, b: L.ger(a[:, 0], b[0]),
    "dist": lambda L, a, b: L.dist(a, b) + L.dist(a, b, 3) + L.dist(a, b[0], 1),
    "dist-inf": lambda L, a, b: L.dist(a, b, float("inf")),
    "renorm": lambda L, a, b: L.renorm(a, 2, 0, 1.0),
    "renorm-p1-dim1": lambda L, a, b: a.renorm(1, 1, 2.5),
    "chain_matmul": lambda L, a, b: L.chain_matmul(a, b.T, a),
    "cholesky_solve": lambda L, a, b: L.cholesky_solve(
        b[:3], L.linalg.cholesky(a.T @ a + L.eye(3, dtype=L.float64))),
    "cholesky_solve-upper": lambda L, a, b: L.cholesky_solve(
        b[:3], L.linalg.cholesky(a.T @ a + L.eye(3, dtype=L.float64)).mT, upper=True),
    "cholesky_inverse": lambda L, a, b: L.cholesky_inverse(
        L.linalg.cholesky(a.T @ a + L.eye(3, dtype=L.float64))),
    "select": lambda L, a, b: L.select(a, 1, -1)[:3] * b.select(0, 2),
    "select_scatter": lambda L, a, b: L.select_scatter(a, b[0], 0, 2),
    "slice_scatter": lambda L, a, b: L.slice_scatter(a, b[:2], 0, 1, 4, 2),
    "slice_scatter-dim1": lambda L, a, b: a.slice_scatter(b[:, :2], 1, 1),
    "diagonal_scatter": lambda L, a, b: L.diagonal_scatter(a, b[0, :2], 1),
    "diagonal_scatter-neg": lambda L, a, b: L.diagonal_scatter(a, b[0], -1),
    "diagonal_scatter-dims": lambda L, a, b: L.diagonal_scatter(
        a.reshape(2, 2, 3), b[:2, :2], 0, 2, 1),
    "diag_embed": lambda L, a, b: L.diag_embed(a) + 0,
    "diag_embed-offset-dims": lambda L, a, b: L.diag_embed(a, -1, 0, 2) * 1,
    "diagflat": lambda L, a, b: L.diagflat(a[:2], 1) + a[0].diagflat().sum(),
    "index_put": lambda L, a, b: L.index_put(a, (L.tensor([0, 2, 0]), L.tensor([1, 1, 1])), b[0]),
    "index_put-accumulate": lambda L, a, b: a.index_put(
        (L.tensor([0, 2, 0]),), b[:3], accumulate=True),
    "index_put-broadcast": lambda L, a, b: L.index_put(a, (L.tensor([3, 1]),), b[0, 0]),
    "split_with_sizes": lambda L, a, b: L.split_with_sizes(a, [1, 3])[1] * 2,
    "sum_to_size": lambda L, a, b: a.reshape(2, 2, 3).sum_to_size(2, 1) + b.sum_to_size(1, 3),
    "mH-adjoint": lambda L, a, b: a.mH @ b + a.adjoint() @ b,
}
for reduce in ("sum", "prod", "mean", "amax", "amin"):
    for include_self in (True, False):
        CASES[f"scatter_reduce-{reduce}-{include_self}"] = (
            lambda L, a, b, r=reduce, s=include_self: L.scatter_reduce(
                a, 0, L.tensor(INDEX), b[:3], r, include_self=s)
        )
CASES["scatter_reduce-dim1"] = lambda L, a, b: a.scatter_reduce(
    1, L.tensor(INDEX[:, :2] % 3), b[:3, :2], "prod")


@pytest.mark.parity
@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_match_pytorch(name):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        a = lib.tensor(A, requires_grad=True)
        b = lib.tensor(B, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = CASES[name](lib, a, b)
        weights = np.random.default_rng(1).standard_normal(tuple(out.shape))
        (out * lib.tensor(weights)).sum().backward()
        results.append((out.detach().numpy(), a.grad, b.grad))
    (ours, our_a, our_b), (theirs, their_a, their_b) = results
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for mine, torchs in ((our_a, their_a), (our_b, their_b)):
        assert (mine is None) == (torchs is None) or torchs is not None and not torchs.any()
        if mine is not None and torchs is not None:
            np.testing.assert_allclose(mine.numpy(), torchs.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "mean", "sum"])
@pytest.mark.parametrize("values", [ZEROS, TIES], ids=["zeros", "ties"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_at_zeros_and_ties_matches_pytorch(reduce, values, include_self):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        x = lib.tensor(np.vstack([values, values[:1] * 0]), requires_grad=True)
        src = lib.tensor(values, requires_grad=True)
        out = lib.scatter_reduce(x, 0, lib.tensor(INDEX), src, reduce, include_self=include_self)
        out.backward(lib.tensor(np.arange(12.0).reshape(4, 3)))
        results.append((out.detach().numpy(), x.grad.numpy(), src.grad.numpy()))
    for mine, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_gradchecks():
    a = tl.tensor(A, requires_grad=True)
    b = tl.tensor(B, requires_grad=True)
    index = tl.tensor(INDEX)
    assert tl.autograd.gradcheck(lambda x: tl.asinh(x) + tl.atanh(x.tanh() * 0.9), (a,))
    assert tl.autograd.gradcheck(lambda x: tl.acosh(x * x + 1.5), (a,))
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        assert tl.autograd.gradcheck(
            lambda x, y, r=reduce: tl.scatter_reduce(x, 0, index, y[:3], r, include_self=False),
            (a, b),
        )
    assert tl.autograd.gradcheck(lambda x, y: tl.diagonal_scatter(x, y[0, :2], 1), (a, b))
    assert tl.autograd.gradcheck(lambda x: tl.diag_embed(x, 1, 0, 2), (a,))
    assert tl.autograd.gradcheck(
        lambda x, y: tl.index_put(x, (tl.tensor([0, 0]),), y[0], accumulate=True), (a, b)
    )
    assert tl.autograd.gradcheck(lambda x: tl.renorm(x, 3, 1, 1.0), (a,))
    assert tl.autograd.gradcheck(
        lambda x, y: tl.cholesky_solve(
            y[:3], tl.linalg.cholesky(x.T @ x + tl.eye(3, dtype=tl.float64))
        ),
        (a, b),
    )


@pytest.mark.parity
def test_no_grad_ops_and_predicates_match_pytorch():
    torch = pytest.importorskip("torch")
    values = np.array([8.0, 0.3, 0.0, -5.5, np.inf, -np.inf, 1e-30])
    for lib in (tl, torch):
        x = lib.tensor(values)
        m, e = lib.frexp(x[:4])
        got = (m.numpy(), e.numpy(), lib.nextafter(x, lib.tensor(np.zeros(7))).numpy(),
               lib.isposinf(x).numpy(), lib.isneginf(x).numpy(), lib.isreal(x).numpy(),
               [a.numpy() for a in lib.unravel_index(lib.tensor([[5, 0], [3, 2]]), (2, 3))],
               [t.numpy() for t in lib.unique_consecutive(
                   lib.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True, return_counts=True)],
               [t.numpy() for t in lib.unique_consecutive(
                   lib.tensor([[1, 1], [1, 1], [2, 3], [1, 1]]), return_counts=True, dim=0)],
               lib.is_signed(x), lib.is_signed(lib.tensor([1], dtype=lib.uint8)),
               lib.is_nonzero(lib.tensor([0.5])), lib.is_same_size(x, x[:3]), lib.is_complex(x),
               (lib.tensor([3, -8]) << 2).numpy(), (lib.tensor([3, -8]) >> 1).numpy(),
               lib.bitwise_left_shift(lib.tensor([1, 2]), lib.tensor([3, 4])).numpy(),
               lib.divide(lib.tensor([5, -5]), 2, rounding_mode="trunc").numpy(),
               lib.divide(lib.tensor([5.0, -5.0]), 2, rounding_mode="floor").numpy(),
               lib.fix(x[:4]).numpy(), lib.sgn(x).numpy(), lib.t(lib.tensor(A)).numpy(),
               bool(lib.all(x)), bool(lib.any(x[2:3])), lib.trapz(lib.tensor(A)).numpy())
        if lib is tl:
            ours = got
    for mine, theirs in zip(ours, got, strict=True):
        if isinstance(mine, list):
            for u, v in zip(mine, theirs, strict=True):
                np.testing.assert_array_equal(u, v)
        else:
            np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window", "kaiser_window"])
@pytest.mark.parametrize("length", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_pytorch(name, length, periodic):
    torch = pytest.importorskip("torch")
    ours = getattr(tl, name)(length, periodic, dtype=tl.float64)
    theirs = getattr(torch, name)(length, periodic, dtype=torch.float64)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
    assert getattr(tl, name)(length).dtype == tl.float32
    if name == "hamming_window":
        np.testing.assert_allclose(tl.hamming_window(length, periodic, 0.5, 0.4).numpy(),
                                   torch.hamming_window(length, periodic, 0.5, 0.4).numpy(),
                                   rtol=1e-6, atol=1e-7)
    if name == "kaiser_window":
        np.testing.assert_allclose(tl.kaiser_window(length, periodic, 3.0).numpy(),
                                   torch.kaiser_window(length, periodic, 3.0).numpy(),
                                   rtol=1e-5, atol=1e-7)


INPLACE = [
    ("asinh_", ()), ("acosh_", ()), ("atanh_", ()), ("arcsinh_", ()), ("asin_", ()),
    ("arccos_", ()), ("atan_", ()), ("sinh_", ()), ("cosh_", ()), ("lgamma_", ()),
    ("digamma_", ()), ("polygamma_", (1,)), ("sinc_", ()), ("rad2deg_", ()), ("deg2rad_", ()),
    ("exp2_", ()), ("log2_", ()), ("log10_", ()), ("erfc_", ()), ("fix_", ()), ("sgn_", ()),
    ("absolute_", ()), ("logit_", (1e-3,)), ("cumsum_", (1,)), ("cumprod_", (0,)),
    ("eq_", (0.5,)), ("ne_", (0.5,)), ("lt_", (0.5,)), ("le_", (0.5,)), ("gt_", (0.5,)),
    ("ge_", (0.5,)), ("greater_", (0.5,)), ("less_equal_", (0.5,)), ("not_equal_", (0.5,)),
    ("logical_and_", ("B",)), ("logical_or_", ("B",)), ("logical_xor_", ("B",)),
    ("copysign_", ("B",)), ("heaviside_", ("B",)), ("xlogy_", ("B",)), ("multiply_", ("B",)),
    ("subtract_", ("B",)), ("divide_", ("B",)), ("true_divide_", ("B",)),
    ("floor_divide_", ("B",)), ("arctan2_", ("B",)), ("nextafter_", ("B",)),
    ("ldexp_", ("B",)), ("renorm_", (2, 0, 0.5)), ("addmm_", ("M", "M")),
    ("addr_", ("V", "V")), ("addbmm_", ("M3", "M3")),
]


@pytest.mark.parity
@pytest.mark.parametrize("name, args", INPLACE, ids=[n for n, _ in INPLACE])
def test_in_place_forms_match_pytorch_and_count_versions(name, args):
    torch = pytest.importorskip("torch")
    values = np.abs(RNG.standard_normal((3, 3))) * 0.4 + 0.3
    other = np.abs(RNG.standard_normal((3, 3))) + 0.2
    results = []
    for lib in (tl, torch):
        named = {"B": lib.tensor(other), "M": lib.tensor(other), "V": lib.tensor(other[0]),
                 "M3": lib.tensor(np.stack([other, other.T]))}
        actual = [named.get(a, a) if isinstance(a, str) else a for a in args]
        x = lib.tensor(values * 3 if name == "acosh_" else values)
        version = x._version
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            returned = getattr(x, name)(*actual)
        assert returned is x and x._version == version + 1
        results.append(x.numpy().copy())
        leaf = lib.tensor(values, requires_grad=True)
        if lib is torch and name.startswith("logical_"):
            continue  # PyTorch 2.13 lets logical_and_ & co. through on a leaf; tensorlib refuses
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            getattr(leaf, name)(*actual)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-7)


@pytest.mark.parity
def test_in_place_views_and_integer_forms_match_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        x = lib.zeros(2, 1, 3)
        x.squeeze_(1)
        assert tuple(x.shape) == (2, 3) and x._version == 1
        x.unsqueeze_(0).transpose_(0, 2)
        assert tuple(x.shape) == (3, 2, 1)
        y = lib.ones(2, 3)
        assert tuple(y.t_().shape) == (3, 2) and tuple(y.swapaxes_(0, 1).shape) == (2, 3)
        assert tuple(y.swapdims_(0, 1).shape) == (3, 2)
        n = lib.tensor([6, 12, 5])
        n &= 3
        n |= 8
        n ^= 1
        n <<= 1
        n >>= 2
        assert n.tolist() == [5, 4, 4]
        assert n.bitwise_and_(lib.tensor([1, 1, 1])).tolist() == [1, 0, 0]
        v = lib.ones(3, dtype=lib.float64)
        assert v.addmv_(lib.ones(3, 2, dtype=lib.float64), lib.ones(2, dtype=lib.float64),
                        beta=2).tolist() == [4.0, 4.0, 4.0]
        assert lib.tensor([6, 4]).gcd_(lib.tensor([4, 6])).tolist() == [2, 2]
        assert lib.tensor([6, 4]).lcm_(lib.tensor([4, 6])).tolist() == [12, 12]
        assert lib.tensor([5, 3]).bitwise_not_().tolist() == [-6, -4]
        assert (3 & lib.tensor([1, 2])).tolist() == [1, 2]
        assert (1 << lib.tensor([2])).tolist() == [4]
        z = lib.zeros(3)
        z.index_put_((lib.tensor([0, 0]),), lib.tensor(2.0), accumulate=True)
        z.scatter_reduce_(0, lib.tensor([1, 1]), lib.tensor([3.0, 4.0]), "amax")
        assert z.tolist() == [4.0, 4.0, 0.0]
        assert lib.relu_(lib.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]
        assert lib.sigmoid_(lib.zeros(1)).tolist() == [0.5]
        assert lib.exp_(lib.zeros(1)).tolist() == [1.0]
        assert lib.zero_(lib.ones(2)).tolist() == [0.0, 0.0]
        assert lib.fill_(lib.ones(2), 3.0).tolist() == [3.0, 3.0]
        assert lib.clamp_(lib.tensor([-2.0, 2.0]), -1, 1).tolist() == [-1.0, 1.0]
        w = lib.ones(2, 1, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            w.squeeze_()
        with lib.no_grad():
            w.squeeze_()
        assert tuple(w.shape) == (2,)


def test_tensor_conveniences():
    x = tl.arange(12.0).reshape(3, 4)
    assert x.ndimension() == 2 and x.is_cpu and not x.is_pinned()
    assert x.pin_memory() is x and x.share_memory_() is x
    assert x[1:].storage_offset() == 4 and x[:, 1].storage_offset() == 1
    assert x.data_ptr() == x.numpy().ctypes.data
    assert x.new_empty_strided((2, 2), (2, 1)).shape == (2, 2)
    assert x.maximum(tl.tensor(5.0)).tolist()[0] == [5.0, 5.0, 5.0, 5.0]
    assert x.remainder(5).tolist()[1] == [4.0, 0.0, 1.0, 2.0]
    assert x.greater(5).sum().item() == 6 and x.less_equal(5).sum().item() == 6
    assert tl.positive(x) is x and not tl.detach(x.requires_grad_()).requires_grad


def test_errors_are_clear():
    x = tl.zeros(2, 3)
    with pytest.raises(RuntimeError, match="rounding_mode"):
        tl.divide(x, 2, rounding_mode="round")
    with pytest.raises(RuntimeError, match="reduce argument must be"):
        tl.scatter_reduce(x, 0, tl.tensor([[0]]), x, "max")
    with pytest.raises(RuntimeError, match="Expected src to be"):
        tl.scatter_reduce(x, 0, tl.tensor([[0]]), tl.zeros(2, 3, dtype=tl.float64), "sum")
    with pytest.raises(RuntimeError, match="src size = \\[3\\], slice size = \\[2\\]"):
        tl.select_scatter(x, tl.zeros(3), 1, 0)
    with pytest.raises(IndexError, match="out of range"):
        tl.select(x, 1, 3)
    with pytest.raises(RuntimeError, match="sum exactly to 2"):
        tl.split_with_sizes(x, [1, 2])
    with pytest.raises(RuntimeError, match="only supports floating-point"):
        tl.frexp(tl.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="more than one value"):
        tl.is_nonzero(x)
    with pytest.raises(RuntimeError, match="non-negative window_length"):
        tl.hann_window(-1)
    with pytest.raises(RuntimeError, match="floating point dtypes"):
        tl.hann_window(3, dtype=tl.int64)
    with pytest.raises(RuntimeError, match="not expandable"):
        x.sum_to_size(3, 3)
    with pytest.raises(RuntimeError, match="last dimension must match"):
        tl.inner(x, tl.zeros(2))
    with pytest.raises(RuntimeError, match="expected integer tensors"):
        x << 1
    with pytest.raises(RuntimeError, match="Expected one or more"):
        tl.chain_matmul()
    with pytest.raises(RuntimeError, match="can't be cast"):
        tl.tensor([1, 2]).asinh_()


@pytest.mark.parity
def test_post_accumulate_grad_hooks_match_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        handle = w.register_post_accumulate_grad_hook(
            lambda t, seen=seen: seen.append(t.grad.tolist())
        )
        w.register_hook(lambda g: g * 10)  # the gradient hooks run first
        (w * 2 + w * 3).sum().backward()
        assert seen == [[50.0, 50.0]]
        lib.autograd.grad((w * w).sum(), w)  # fills no .grad: no call
        assert len(seen) == 1
        handle.remove()
        (w * 1).sum().backward()
        assert len(seen) == 1
        with pytest.raises(RuntimeError, match="non-leaf"):
            (w * 2).register_post_accumulate_grad_hook(print)
        with pytest.raises(RuntimeError, match="doesn't require gradient"):
            lib.ones(2).register_post_accumulate_grad_hook(print)
    w = tl.ones(2, requires_grad=True)
    w.register_post_accumulate_grad_hook(lambda t: 5)
    with pytest.raises(TypeError, match="must return None"):
        w.sum().backward()


# frexp's mantissa and nextafter have PyTorch's gradients (they were detached)
def test_frexp_mantissa_gradient_is_two_to_minus_the_exponent():
    x = tl.tensor([0.3, -1.7, 5.0, 0.0], dtype=tl.float64, requires_grad=True)
    mantissa, exponent = tl.frexp(x)
    mantissa.sum().backward()
    assert x.grad.tolist() == [2.0, 0.5, 0.125, 1.0]  # torch's values
    assert exponent.tolist() == [-1, 1, 3, 0] and not exponent.requires_grad
    y = tl.tensor([0.3, -1.7, 5.0, 12.5], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: tl.frexp(t).mantissa, (y,))
    assert tl.autograd.gradgradcheck(lambda t: tl.frexp(t).mantissa * t, (y,))


def test_nextafter_passes_the_gradient_to_input_and_none_to_other():
    x = tl.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=tl.float64, requires_grad=True)
    other = tl.tensor([0.0, 9.0], dtype=tl.float64, requires_grad=True)
    out = tl.nextafter(x, other)
    assert out.requires_grad
    (out * 3).sum().backward()
    assert x.grad.tolist() == [[3.0, 3.0], [3.0, 3.0]] and other.grad.tolist() == [0.0, 0.0]
    assert tl.autograd.gradcheck(lambda t: tl.nextafter(t, other.detach()), (x,))


@pytest.mark.parity
def test_frexp_and_nextafter_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    a, b, w = rng.normal(size=(3, 4)) * 5, rng.normal(size=(4,)), rng.normal(size=(3, 4))
    results = []
    for lib in (tl, torch):
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        y = lib.tensor(b, dtype=lib.float64, requires_grad=True)
        weights = lib.tensor(w, dtype=lib.float64)
        ((lib.frexp(x)[0] + lib.nextafter(x, y)) * weights).sum().backward()
        results.append((x.grad.numpy(), y.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_array_equal(ours, theirs)


# nextafter: the gradient goes to input only where input != other (PyTorch's rule)
def test_nextafter_gradient_is_zero_where_input_equals_other():
    x = tl.tensor([[1.0], [2.0]], dtype=tl.float64, requires_grad=True)
    other = tl.tensor([1.0, 5.0, 2.0], dtype=tl.float64)
    tl.nextafter(x, other).backward(tl.ones(2, 3, dtype=tl.float64))
    assert x.grad.tolist() == [[2.0], [2.0]]
    (g,) = tl.autograd.grad(tl.nextafter(x, other).sum(), (x,), create_graph=True)
    assert g.tolist() == [[2.0], [2.0]]


@pytest.mark.parity
def test_nextafter_gradient_and_dtype_match_pytorch():
    torch = pytest.importorskip("torch")
    a, b = np.array([[1.0], [2.0], [3.0]]), np.array([1.0, 5.0, 3.0, 2.0])
    results = []
    for lib in (tl, torch):
        x = lib.tensor(a, requires_grad=True)
        y = lib.nextafter(x, lib.tensor(b, dtype=lib.float64))
        y.backward(lib.tensor(np.arange(12.0).reshape(3, 4), dtype=lib.float64))
        results.append((str(y.dtype).split(".")[-1], x.grad.numpy().tolist()))
    assert results[0] == results[1]
    with pytest.raises(NotImplementedError, match="\"nextafter_cpu\" not implemented for 'Long'"):
        tl.nextafter(tl.tensor([1]), tl.tensor([2]))


@pytest.mark.parity
@pytest.mark.parametrize("call", [
    lambda lib: lib.nextafter(lib.tensor([1.0]), 2.0),
    lambda lib: lib.nextafter(1.0, lib.tensor([2.0])),
])
def test_nextafter_refuses_a_number_as_pytorch(call):
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError) as theirs:
        call(torch)
    with pytest.raises(TypeError) as ours:
        call(tl)
    assert str(ours.value) == str(theirs.value)
