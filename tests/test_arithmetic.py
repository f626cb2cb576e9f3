"""Arithmetic on integers and at zero, as in PyTorch.

Integer division or remainder by zero raises (float division gives inf); an integer to a negative
integer power raises for a Python exponent and is integer arithmetic for a tensor exponent;
``x ** 0`` has gradient 0, also at 0.
"""

from __future__ import annotations

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
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(PROBE))
def test_matches_pytorch(case):
    assert_matches_pytorch(case, PROBE[case])
