"""set_default_dtype / get_default_dtype (chapter 2, section 8): every place a float dtype is chosen
by default follows it, as in PyTorch."""

from __future__ import annotations

import pytest

import tensorlib as tl


@pytest.fixture
def float64_default():
    tl.set_default_dtype(tl.float64)
    try:
        yield
    finally:
        tl.set_default_dtype(tl.float32)


CHOICES = {
    "python floats": lambda L: L.tensor([1.5]),
    "zeros": lambda L: L.zeros(2),
    "ones": lambda L: L.ones(2),
    "empty": lambda L: L.empty(2),
    "full with a float": lambda L: L.full((2,), 1.5),
    "arange with a float step": lambda L: L.arange(0, 1, 0.5),
    "linspace": lambda L: L.linspace(0, 1, 3),
    "logspace": lambda L: L.logspace(0, 1, 3),
    "eye": lambda L: L.eye(2),
    "rand": lambda L: L.rand(2),
    "randn": lambda L: L.randn(2),
    "int / int": lambda L: L.tensor([1]) / L.tensor([2]),
    "int * float": lambda L: L.tensor([1]) * 1.5,
    "exp of ints": lambda L: L.tensor([1]).exp(),
    "atan2 of ints": lambda L: L.atan2(L.tensor([1]), L.tensor([2])),
    "erf of ints": lambda L: L.erf(L.tensor([1])),
    "MultiheadAttention": lambda L: L.nn.MultiheadAttention(4, 2).in_proj_weight,
}


@pytest.mark.parity
@pytest.mark.parametrize("name", list(CHOICES))
def test_each_default_follows_set_default_dtype_as_in_pytorch(name, float64_default):
    torch = pytest.importorskip("torch")
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        theirs = str(CHOICES[name](torch).dtype).removeprefix("torch.")
    finally:
        torch.set_default_dtype(before)
    assert str(CHOICES[name](tl).dtype) == theirs == "float64"


def test_default_is_float32_and_only_floats_are_accepted():
    assert tl.get_default_dtype() == tl.float32
    for bad in (tl.int64, tl.bool, "float64", None):
        with pytest.raises(TypeError, match="floating-point"):
            tl.set_default_dtype(bad)
    assert tl.get_default_dtype() == tl.float32
    assert tl.tensor([1.5]).dtype == tl.float32
