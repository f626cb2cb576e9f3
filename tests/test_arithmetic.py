"""Arithmetic on integers and at zero, as in PyTorch.

Integer division or remainder by zero raises (float division gives inf); an integer to a negative
integer power raises for a Python exponent and is integer arithmetic for a tensor exponent;
``x ** 0`` has gradient 0, also at 0.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from _probe import assert_matches_pytorch, grad_of

import tensorlib as tl


def test_integer_division_by_zero_raises():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tl.tensor([1, 2]) // tl.tensor([1, 0])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tl.tensor([1, 2]) % 0
    assert (tl.tensor([7, 9]) // 2).tolist() == [3, 4]
    # float division by zero stays inf, as in torch
    assert np.isinf((tl.tensor([1.0]) // 0.0).numpy()).all()


def test_the_zeroth_power_has_gradient_zero_also_at_zero():
    assert grad_of(tl, [0.0, 1.0], lambda t: t**0).tolist() == [0.0, 0.0]


@pytest.mark.parametrize(
    "call",
    [lambda: tl.tensor([1, 2]) ** -1, lambda: tl.tensor([1, 2]).pow(-2),
     lambda: tl.tensor(np.array([1, 2], np.uint8)) ** -1, lambda: tl.tensor([True]) ** -1],
    ids=["int64 ** -1", "int64.pow(-2)", "uint8 ** -1", "bool ** -1"],
)
def test_integers_to_a_negative_number_raise(call):
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        call()


def test_integers_to_negative_tensor_exponents_are_integer_arithmetic():
    base, exponent = tl.tensor([0, 1, -1, 2, -2, -1, 3]), tl.tensor([-1, -5, -3, -1, -1, -2, 0])
    result = base**exponent
    assert result.dtype == np.int64 and result.tolist() == [0, 1, -1, 0, 0, 1, 1]  # torch's values
    assert (2 ** tl.tensor([-1, 1])).tolist() == [0, 2]
    assert (tl.tensor([1, 2]) ** -1.0).tolist() == [1.0, 0.5]  # a float exponent: a float result
    assert (tl.tensor([2.0]) ** -1).tolist() == [0.5]


PROBE = {
    "x ** 0 gradient at 0": lambda lib: grad_of(lib, [0.0, 1.0], lambda t: t**0),
    "integer remainder by zero": lambda lib: lib.tensor([1, 2]) % 0,
    "integer division by zero": lambda lib: lib.tensor([1, 2]) // lib.tensor([1, 0]),
    "int64 ** -1": lambda lib: lib.tensor([1, 2]) ** -1,
    "int64 ** negative tensor": lambda lib: (
        lib.tensor([0, 1, -1, 2]) ** lib.tensor([-1, -5, -3, -1])
    ),
    "2 ** negative int tensor": lambda lib: 2 ** lib.tensor([-1, 1]),
    "gcd(tensor, int)": lambda lib: lib.gcd(lib.tensor([4]), 18),  # TypeError (review 7)
    "lcm(int, tensor)": lambda lib: lib.lcm(18, lib.tensor([4])),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(PROBE))
def test_matches_pytorch(case):
    assert_matches_pytorch(case, PROBE[case])


# One exponent and a floating tensor: PyTorch's shortcuts (2, 3, -1, -2, -1/2) with its bits, and
# other whole exponents as |a|^b with a's sign put back (numpy's power is slow on negative bases)
BASES = (np.random.default_rng(0).standard_normal(4096) * 3).astype(np.float32)
SHORTCUTS = (2.0, 3.0, -1.0, -2.0, -0.5)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("exponent", SHORTCUTS)
def test_pytorchs_power_shortcuts_give_its_bits(exponent, dtype):
    torch = pytest.importorskip("torch")
    bases = BASES.astype(dtype)
    with np.errstate(invalid="ignore"):  # (-x) ** -0.5 is NaN in both
        ours = (tl.tensor(bases) ** exponent).numpy()
    theirs = torch.pow(torch.from_numpy(bases), exponent).numpy()
    assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs, equal_nan=True)


@pytest.mark.parametrize("exponent", [0, 1, 4, 5, -3, 7.0, 2.5])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_whole_powers_of_negative_bases_are_numpys_values_with_the_sign_of_an_odd_power(
    exponent, dtype
):
    bases = BASES.astype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        ours = (tl.tensor(bases) ** exponent).numpy()
        reference = np.power(bases.astype(np.float64), exponent).astype(dtype)
    assert ours.dtype == dtype
    tolerance = {np.float16: 1e-3, np.float32: 1e-6, np.float64: 1e-14}[dtype]
    np.testing.assert_allclose(ours, reference, rtol=tolerance, equal_nan=True)
    if float(exponent).is_integer():  # odd powers are odd functions, even ones even, to the bit
        sign = -1 if exponent % 2 else 1
        assert np.array_equal((tl.tensor(-bases) ** exponent).numpy(), sign * ours)


def test_power_shortcuts_keep_signed_zeros_infinities_and_nan():
    values = tl.tensor([-0.0, 0.0, -np.inf, np.inf, np.nan, -2.0])
    cube, fifth = (values**3).numpy(), (values**5).numpy()
    for result in (cube, fifth):
        assert np.signbit(result[0]) and not np.signbit(result[1])
        assert result[2] == -np.inf and result[3] == np.inf and np.isnan(result[4])
    assert cube[5] == -8.0 and fifth[5] == -32.0
    assert (values**4).numpy()[2] == np.inf and (values**-3).numpy()[0] == -np.inf
    assert (tl.tensor([0.0]) ** -1).tolist() == [np.inf]  # no warning either (pytest -W error)
    # a 0-d base (an element of a tensor), odd and even
    for exponent, expected in ((5, -32.0), (4, 16.0), (3, -8.0), (-3, -0.125)):
        result = tl.tensor([-2.0, 1.0])[0] ** exponent
        assert result.shape == () and result.item() == expected


@pytest.mark.parametrize("exponent", [3.0, 4.0, -3.0, 0.5, -2.0, -0.5])
def test_power_gradients_with_the_shortcuts(exponent):
    bases = np.random.default_rng(1).standard_normal(6) * 2
    if exponent in (0.5, -0.5):
        bases = np.abs(bases) + 0.5
    x = tl.tensor(bases, dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: t**exponent, (x,))
    assert tl.autograd.gradcheck(lambda t: tl.pow(t, exponent).sum() * t, (x,))


EQUAL_CASES = {
    "same": (lambda lib: (lib.ones(2, 3), lib.ones(2, 3))),
    "other shape": (lambda lib: (lib.ones(1, 3), lib.ones(3))),
    "other value": (lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.5]))),
    "nan": (lambda lib: (lib.tensor([float("nan")]), lib.tensor([float("nan")]))),
    "other dtype, same values": (lambda lib: (lib.ones(2), lib.ones(2, dtype=lib.int64))),
    "empty": (lambda lib: (lib.zeros(0), lib.zeros(0))),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(EQUAL_CASES))
def test_equal_matches_pytorch(case):
    torch = pytest.importorskip("torch")
    a, b = EQUAL_CASES[case](tl)
    ta, tb = EQUAL_CASES[case](torch)
    assert tl.equal(a, b) is torch.equal(ta, tb) and a.equal(b) is ta.equal(tb)


def test_equal_wants_tensors():
    with pytest.raises(TypeError, match="equal expects Tensors, got list"):
        tl.equal(tl.ones(2), [1.0, 1.0])


# The remainder, the rounded divisions and the ops PyTorch records without a derivative (the OpInfo
# sweep found them detached: a loss adding such a term to others silently lost that path)
def _both_grads(lib, a, b, fn):
    x = lib.tensor(np.array(a, dtype=np.float64), requires_grad=True)
    y = lib.tensor(np.array(b, dtype=np.float64), requires_grad=True)
    out = fn(x, y)
    out.backward(lib.ones_like(out))
    return out, x.grad, y.grad


def test_remainder_has_pytorchs_gradient_in_both_arguments():
    out, gx, gy = _both_grads(tl, [1.5, -2.5, 3.0], [2.0, 2.0, -1.0], lambda x, y: x % y)
    assert out.requires_grad and out.tolist() == [1.5, 1.5, -0.0]
    assert gx.tolist() == [1.0, 1.0, 1.0] and gy.tolist() == [-0.0, 2.0, 3.0]  # torch's values


def test_remainder_gradcheck_and_broadcast():
    rng = np.random.default_rng(0)
    a = tl.tensor(rng.uniform(-3, 3, size=(3, 4)), requires_grad=True)
    b = tl.tensor(rng.choice([-1.3, 0.7, 2.1], size=(4,)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda p, q: tl.remainder(p, q), (a, b))
    assert tl.autograd.gradgradcheck(lambda p, q: tl.remainder(p, q), (a, b))
    assert tl.autograd.gradcheck(lambda p: p % 0.7, (a,))


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_rounded_division_is_in_the_graph_with_a_zero_gradient(mode):
    out, gx, gy = _both_grads(tl, [1.5, -2.5], [2.0, 2.0],
                              lambda x, y: tl.div(x, y, rounding_mode=mode))
    assert out.requires_grad and out.grad_fn is not None
    assert gx.tolist() == [0.0, 0.0] and gy.tolist() == [0.0, 0.0]
    assert out.tolist() == ([0.0, -2.0] if mode == "floor" else [0.0, -1.0])
    assert tl.div(tl.tensor([7, -7]), 2, rounding_mode=mode).tolist() == (
        [3, -4] if mode == "floor" else [3, -3])


NO_DERIVATIVE = {
    "floor_divide": lambda lib, x: x // 0.7,
    "heaviside": lambda lib, x: lib.heaviside(x, lib.ones_like(x)),
    "histogram": lambda lib, x: lib.histogram(x, 4)[0],
    "unique": lambda lib, x: lib.unique(x),
    "unique_consecutive": lambda lib, x: lib.unique_consecutive(x),
}


@pytest.mark.parametrize("name", list(NO_DERIVATIVE))
def test_ops_without_a_derivative_raise_in_backward_instead_of_detaching(name):
    x = tl.tensor([0.3, -1.2, 2.5, 2.5], dtype=tl.float64, requires_grad=True)
    out = NO_DERIVATIVE[name](tl, x)
    assert out.requires_grad
    loss = (x * x).sum() + out.sum()  # the other term alone would train silently
    with pytest.raises(RuntimeError, match="derivative for .* is not implemented"):
        loss.backward()
    assert not NO_DERIVATIVE[name](tl, x.detach()).requires_grad


@pytest.mark.parity
@pytest.mark.parametrize("name", list(NO_DERIVATIVE))
def test_ops_without_a_derivative_match_pytorch(name):
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        x = lib.tensor([0.3, -1.2, 2.5, 2.5], dtype=lib.float64, requires_grad=True)
        out = NO_DERIVATIVE[name](lib, x)
        assert out.requires_grad
        with pytest.raises(RuntimeError, match="derivative for"):
            out.sum().backward()


@pytest.mark.parity
@pytest.mark.parametrize("fn", [
    lambda lib, x, y: lib.remainder(x, y), lambda lib, x, y: x % 0.7,
    lambda lib, x, y: lib.div(x, y, rounding_mode="floor"),
    lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"),
], ids=["remainder", "remainder by a number", "div floor", "div trunc"])
def test_remainder_and_rounded_division_match_pytorch(fn):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-3, 3, size=(3, 4)), rng.choice([-1.3, 0.7, 2.1], size=(4,))
    results = []
    for lib in (tl, torch):
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        y = lib.tensor(b, dtype=lib.float64, requires_grad=True)
        out = fn(lib, x, y)
        (out * lib.tensor(a, dtype=lib.float64)).sum().backward()
        results.append([out.detach().numpy(), x.grad.numpy(),
                        None if y.grad is None else y.grad.numpy()])
    for ours, theirs in zip(*results, strict=True):
        if theirs is None:
            assert ours is None
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


# The rounded divisions are exact on integers; %, // and rounded div promote as + does
@pytest.mark.parity
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_rounded_integer_division_is_exact(mode):
    torch = pytest.importorskip("torch")
    a = [2**62 + 1, -(2**62) - 3, -7, 7, -6, 7, 0, 2**53 + 1]
    b = [1, 2, 2, -2, 3, 2, -5, 3]
    ours = tl.div(tl.tensor(a), tl.tensor(b), rounding_mode=mode)
    theirs = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode=mode)
    assert ours.dtype == tl.int64 and ours.tolist() == theirs.tolist()
    if mode == "floor":
        assert (tl.tensor(a) // tl.tensor(b)).tolist() == theirs.tolist()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tl.div(tl.tensor([3]), tl.tensor([0]), rounding_mode=mode)


@pytest.mark.parity
def test_rounding_ops_promote_as_add():
    torch = pytest.importorskip("torch")
    cases = [
        lambda lib: lib.tensor([5, -3]) % 2.5,
        lambda lib: lib.tensor([5, -3]) // 2.5,
        lambda lib: lib.div(lib.tensor([5, -3]), 2.5, rounding_mode="floor"),
        lambda lib: lib.div(lib.tensor([5, -3]), 2.5, rounding_mode="trunc"),
        lambda lib: lib.tensor([5.0, -3.0]) % lib.tensor(2.5, dtype=lib.float64),
        lambda lib: lib.tensor([5, -3], dtype=lib.int32) % lib.tensor(2),
        lambda lib: lib.tensor([5, -3], dtype=lib.int32) // lib.tensor(2),
        lambda lib: lib.nextafter(lib.tensor([1.0]), lib.tensor([2.0], dtype=lib.float64)),
        lambda lib: lib.nextafter(lib.tensor([1.0]), lib.tensor(2.0, dtype=lib.float64)),
        lambda lib: 7 % lib.tensor([5, -3]),
        lambda lib: 7.5 % lib.tensor([5, -3]),
        lambda lib: 7 // lib.tensor([5, -3]),
        lambda lib: lib.tensor([True, False]) % 2,
        lambda lib: lib.gcd(lib.tensor([4], dtype=lib.int32), lib.tensor([6])),
    ]
    for case in cases:
        ours, theirs = case(tl), case(torch)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parity
def test_bool_remainder_and_float_gcd_raise_as_pytorch():
    torch = pytest.importorskip("torch")
    cases = [
        lambda lib: lib.tensor([True]) % lib.tensor([True]),
        lambda lib: lib.tensor([True]) // lib.tensor([True]),
        lambda lib: lib.div(lib.tensor([True]), lib.tensor([True]), rounding_mode="trunc"),
        lambda lib: lib.gcd(lib.tensor([1.0]), lib.tensor([2.0])),
        lambda lib: lib.lcm(lib.tensor([1.0], dtype=lib.float64), lib.tensor([2.0])),
        lambda lib: lib.gcd(lib.tensor([True]), lib.tensor([True])),
    ]
    for case in cases:
        with pytest.raises(NotImplementedError) as theirs:
            case(torch)
        with pytest.raises(NotImplementedError, match=re.escape(str(theirs.value))):
            case(tl)


def test_gcd_and_lcm_take_tensors_only():
    """PyTorch 2.13: ``gcd(t, 18)`` is a TypeError naming the argument."""
    message = r"gcd\(\): argument 'other' \(position 2\) must be Tensor, not int"
    with pytest.raises(TypeError, match=message):
        tl.gcd(tl.tensor([4]), 18)
    with pytest.raises(TypeError, match=r"lcm\(\): argument 'input' \(position 1\) must be Tensor"):
        tl.lcm(18, tl.tensor([4]))


# A Python int outside an integer tensor's range: PyTorch 2.13 wraps it into the dtype (two's
# complement) in the arithmetic, comparisons and bit ops, refuses it where it converts the number
# checked (fill_, full, masked_fill, where, clamp, an exponent, alpha, x[i] = v, tensor(v, dtype)),
# and raises OverflowError for an int it cannot read (below -2**63, from 2**64 on)
def test_an_int_out_of_range_wraps_into_the_dtype_as_in_pytorch():
    x = tl.tensor([1, 2], dtype=tl.int8)
    assert (x + 300).dtype == tl.int8 and (x + 300).tolist() == [45, 46]  # 300 - 256 = 44
    assert (300 - x).tolist() == [43, 42] and (x == 300).tolist() == [False, False]
    assert (x > 300).tolist() == [False, False]  # 300 is 44 in int8
    u = tl.tensor([3, 2], dtype=tl.uint8)
    assert (u % -1).tolist() == [3, 2] and (u // -1).tolist() == [0, 0]  # -1 is 255 in uint8
    assert (x / 300).dtype == tl.float32 and abs((x / 300).tolist()[0] - 1 / 300) < 1e-9
    y = x.clone()
    y += 300
    assert y.tolist() == [45, 46]
    assert u.clone().fill_(-1).tolist() == [255, 255]  # a uint8 takes -255 to 255, as in C


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda x: x.clone().fill_(300), RuntimeError,
         "value cannot be converted to type int8_t without overflow"),
        (lambda x: tl.full_like(x, -129), RuntimeError, "type int8_t without overflow"),
        (lambda x: tl.where(x > 1, x, 128), RuntimeError, "type int8_t without overflow"),
        (lambda x: x.clamp(min=300), RuntimeError, "type int8_t without overflow"),
        (lambda x: x ** 300, RuntimeError, "type int8_t without overflow"),
        (lambda x: tl.add(x, 1, alpha=300), RuntimeError, "type int8_t without overflow"),
        (lambda x: tl.tensor(300, dtype=tl.int8), RuntimeError,
         "value cannot be converted to type int8 without overflow"),
        (lambda x: x + 2**64, OverflowError, "int too big to convert"),
        (lambda x: x + (-(2**63) - 1), OverflowError, "can't convert negative int to unsigned"),
    ],
    ids=["fill_", "full_like", "where", "clamp", "pow", "alpha", "tensor", "2**64", "-2**63-1"],
)
def test_an_int_out_of_range_is_refused_where_pytorch_checks_it(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call(tl.tensor([1, 2], dtype=tl.int8))


def _in_place(step: Any) -> Any:
    """A case that changes a clone of the tensor in place and returns it."""

    def run(lib: Any, x: Any, s: int) -> Any:
        y = x.clone()
        result = step(lib, y, s)
        return y if result is None else result

    return run


def _iop(op: str) -> Any:
    """``y op= s`` (an augmented assignment) as a case."""
    code = compile(f"y {op}= s", "<case>", "exec")

    def step(lib: Any, y: Any, s: int) -> Any:
        names = {"y": y, "s": s}
        exec(code, names)  # noqa: S102 - the augmented assignment under test
        return names["y"]

    return _in_place(step)


def _setitem(lib: Any, y: Any, s: int) -> None:
    y[0] = s


OUT_OF_RANGE = {
    "x + s": lambda lib, x, s: x + s, "s + x": lambda lib, x, s: s + x,
    "x - s": lambda lib, x, s: x - s, "s - x": lambda lib, x, s: s - x,
    "x * s": lambda lib, x, s: x * s, "x / s": lambda lib, x, s: x / s,
    "s / x": lambda lib, x, s: s / x, "x // s": lambda lib, x, s: x // s,
    "s // x": lambda lib, x, s: s // x, "x % s": lambda lib, x, s: x % s,
    "s % x": lambda lib, x, s: s % x, "x ** s": lambda lib, x, s: x**s,
    "s ** x": lambda lib, x, s: s**x, "x & s": lambda lib, x, s: x & s,
    "s | x": lambda lib, x, s: s | x, "x ^ s": lambda lib, x, s: x ^ s,
    "x << s": lambda lib, x, s: x << s, "s << x": lambda lib, x, s: s << x,
    "x >> s": lambda lib, x, s: x >> s, "s >> x": lambda lib, x, s: s >> x,
    **{f"x {op}= s": _iop(op) for op in ("+", "-", "*", "//", "%", "**", "&", "|", "^")},
    "x <<= s": _iop("<<"), "x >>= s": _iop(">>"),
    "add_(s)": _in_place(lambda lib, y, s: y.add_(s)),
    "sub_(s)": _in_place(lambda lib, y, s: y.sub_(s)),
    "mul_(s)": _in_place(lambda lib, y, s: y.mul_(s)),
    "add_(1, alpha=s)": _in_place(lambda lib, y, s: y.add_(1, alpha=s)),
    "add(x, s, alpha=2)": lambda lib, x, s: lib.add(x, s, alpha=2),
    "add(x, x, alpha=s)": lambda lib, x, s: lib.add(x, x, alpha=s),
    "sub(x, 1, alpha=s)": lambda lib, x, s: lib.sub(x, 1, alpha=s),
    "div(x, s, floor)": lambda lib, x, s: lib.div(x, s, rounding_mode="floor"),
    "div(x, s, trunc)": lambda lib, x, s: lib.div(x, s, rounding_mode="trunc"),
    "x == s": lambda lib, x, s: x == s, "x != s": lambda lib, x, s: x != s,
    "x < s": lambda lib, x, s: x < s, "x >= s": lambda lib, x, s: x >= s,
    "s > x": lambda lib, x, s: s > x,
    "where(c, x, s)": lambda lib, x, s: lib.where(x > 1, x, s),
    "where(c, s, x)": lambda lib, x, s: lib.where(x > 1, s, x),
    "fill_(s)": _in_place(lambda lib, y, s: y.fill_(s)),
    "clamp(min=s)": lambda lib, x, s: lib.clamp(x, min=s),
    "clamp_max(s)": lambda lib, x, s: lib.clamp_max(x, s),
    "clamp_(min=s)": _in_place(lambda lib, y, s: y.clamp_(min=s)),
    "masked_fill(s)": lambda lib, x, s: x.masked_fill(x > 1, s),
    "masked_fill_(s)": _in_place(lambda lib, y, s: y.masked_fill_(y > 1, s)),
    "full_like(x, s)": lambda lib, x, s: lib.full_like(x, s),
    "full(2, s, dtype)": lambda lib, x, s: lib.full((2,), s, dtype=x.dtype),
    "new_full(2, s)": lambda lib, x, s: x.new_full((2,), s),
    "remainder(s, x)": lambda lib, x, s: lib.remainder(s, x),
    "floor_divide(x, s)": lambda lib, x, s: lib.floor_divide(x, s),
    "fmod(x, s)": lambda lib, x, s: lib.fmod(x, s),
    "bitwise_and(x, s)": lambda lib, x, s: lib.bitwise_and(x, s),
    "bitwise_right_shift(x, s)": lambda lib, x, s: lib.bitwise_right_shift(x, s),
    "pow(s, x)": lambda lib, x, s: lib.pow(s, x),
    "index_fill(0, i, s)": lambda lib, x, s: x.index_fill(0, lib.tensor([0, 2]), s),
    "tensor(s, dtype)": lambda lib, x, s: lib.tensor(s, dtype=x.dtype),
    "tensor([s, 1], dtype)": lambda lib, x, s: lib.tensor([s, 1], dtype=x.dtype),
    "x[0] = s": _in_place(_setitem),
}
_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-(2**15), 2**15 - 1),
           "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _out_of_range(name: str) -> list[int]:
    """Just outside the range of ``name``, far outside it, past int64 and past uint64."""
    low, high = _RANGES[name]
    wanted = [high + 1, low - 1, 300, -300, 2**40, -(2**40), 2**63, -(2**63) - 1, 2**64]
    return [s for s in dict.fromkeys(wanted) if not low <= s <= high]


def _result(lib: Any, case: Any, name: str, s: int) -> tuple[Any, ...]:
    x = lib.tensor([3, 2, 1, 7] if name == "uint8" else [3, -2, 1, 7], dtype=getattr(lib, name))
    try:
        out = case(lib, x, s)
    except Exception as error:  # noqa: BLE001 - the parity test compares which error
        return type(error).__name__, str(error)
    return str(out.dtype).split(".")[-1], out.tolist()


@pytest.mark.parity
@pytest.mark.parametrize("op", list(OUT_OF_RANGE))
def test_ints_out_of_an_integer_dtypes_range_match_pytorch(op):
    """Each op, each integer dtype, Python ints just and far outside its range: PyTorch's dtype and
    values, or its exception type and message (tensorlib's may say more)."""
    torch = pytest.importorskip("torch")
    for name in _RANGES:
        for s in _out_of_range(name):
            ours = _result(tl, OUT_OF_RANGE[op], name, s)
            theirs = _result(torch, OUT_OF_RANGE[op], name, s)
            where = f"{op} with {name} and {s}: tensorlib {ours}, PyTorch {theirs}"
            assert ours[0] == theirs[0], where
            if isinstance(theirs[1], str):
                assert theirs[1] in ours[1], where
            elif ours[0].startswith("float"):  # s / x: PyTorch multiplies by the reciprocal
                np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6, err_msg=where)
            else:
                assert ours[1] == theirs[1], where


@pytest.mark.parity
@pytest.mark.parametrize("s", [2, -1, 300, 2**63, 2**64])
def test_ints_meeting_a_bool_tensor_match_pytorch(s):
    """A bool tensor and an int promote to int64 (no wrap); PyTorch reads an int past int64 as a
    uint64, which it does not promote with bool."""
    torch = pytest.importorskip("torch")
    cases = [lambda lib, x: x + s, lambda lib, x: x == s, lambda lib, x: x & s,
             lambda lib, x: x.clone().fill_(s), lambda lib, x: lib.where(x, x, s),
             lambda lib, x: x ** s, lambda lib, x: s / x]
    for index, case in enumerate(cases):
        ours, theirs = (_result(lib, lambda lib, x, _, case=case: case(lib, x), "bool", s)
                        for lib in (tl, torch))
        assert ours[0] == theirs[0] and (theirs[1] in ours[1] if isinstance(theirs[1], str)
                                         else ours[1] == theirs[1]), (index, ours, theirs)


_FLOAT_RESULT_OPS = {
    "copysign": lambda lib, x, s: lib.copysign(x, s),
    "xlogy": lambda lib, x, s: lib.xlogy(x, s),
    "xlogy reversed": lambda lib, x, s: lib.xlogy(s, x),
    "xlog1py": lambda lib, x, s: lib.special.xlog1py(x, s),
    "zeta": lambda lib, x, s: lib.special.zeta(x + 1, s),
    "atan2": lambda lib, x, s: lib.atan2(x, lib.tensor(float(s))),
}


@pytest.mark.parity
@pytest.mark.parametrize("op", list(_FLOAT_RESULT_OPS))
@pytest.mark.parametrize(("dtype", "number"), [("int8", 300), ("int8", 128), ("uint8", -1)])
def test_ops_with_a_float_result_never_wrap_the_number(op, dtype, number):
    """An int out of an integer tensor's range is not wrapped when the op computes in float."""
    torch = pytest.importorskip("torch")
    got = {}
    for lib in (torch, tl):
        x = lib.tensor([1, 2, 3], dtype=getattr(lib, dtype))
        got[lib.__name__] = _FLOAT_RESULT_OPS[op](lib, x, number).tolist()
    np.testing.assert_allclose(got["tensorlib"], got["torch"], rtol=1e-6)


@pytest.mark.parity
def test_addcmul_checks_an_int_value_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, tl):
        x = lib.tensor([1, 2, 3], dtype=lib.int8)
        with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t"):
            lib.addcmul(x, x, x, value=300)
        assert lib.addcmul(x, x, x, value=2).tolist() == [3, 10, 21]


_FLOAT_FILLS = [2.7, -2.7, 127.5, 128.0, -128.9, -129.0, float("nan"), float("inf"), 255.5, -1.0]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32"])
@pytest.mark.parametrize(
    "how", ["fill_", "full", "tensor", "masked_fill", "setitem", "masked_fill 0-d tensor"]
)
def test_a_float_value_into_an_integer_tensor_is_converted_checked(dtype, how):
    """A float fill value for an integer tensor: truncated if finite and in the dtype's range,
    else refused with PyTorch's message (int8 refuses 127.5; uint8 refuses -1.0)."""
    torch = pytest.importorskip("torch")

    def run(lib, value):
        kind = getattr(lib, dtype)
        if how == "fill_":
            return lib.zeros(2, dtype=kind).fill_(value).tolist()
        if how == "full":
            return lib.full((2,), value, dtype=kind).tolist()
        if how == "tensor":
            return lib.tensor([value, 1.0], dtype=kind).tolist()
        mask = lib.tensor([True, False])
        if how == "masked_fill":
            return lib.zeros(2, dtype=kind).masked_fill(mask, value).tolist()
        if how == "masked_fill 0-d tensor":
            return lib.zeros(2, dtype=kind).masked_fill(mask, lib.tensor(value)).tolist()
        target = lib.zeros(2, dtype=kind)
        target[0] = value
        return target.tolist()

    for value in _FLOAT_FILLS:
        outcome = {}
        for lib in (torch, tl):
            try:
                outcome[lib.__name__] = run(lib, value)
            except RuntimeError as error:
                outcome[lib.__name__] = "refused" if "without overflow" in str(error) else error
        assert outcome["tensorlib"] == outcome["torch"], (value, outcome)
