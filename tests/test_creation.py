"""Making tensors from Python and numpy data: PyTorch's refusals.

A Python int outside int64 raises (numpy would store it as uint64 or an object array; as a float
it is fine), and a big-endian array is refused by ``from_numpy``, ``tensor`` and ``Tensor`` alike.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _probe import assert_matches_pytorch

import tensorlib as tl


@pytest.mark.parametrize(
    "data",
    [[2**63], 2**70, [-(2**63) - 1], [[1, 2], [3, 2**64]]],
    ids=["2**63", "2**70", "-2**63-1", "nested"],
)
def test_python_ints_beyond_int64_raise(data):
    with pytest.raises(ValueError, match="Overflow"):
        tl.tensor(data)


def test_python_ints_at_the_edge_of_int64_and_big_ints_as_floats_work():
    assert tl.tensor([2**63 - 1, -(2**63)]).tolist() == [2**63 - 1, -(2**63)]
    # as floats: fine, as in torch
    assert tl.tensor([2**70], dtype=tl.float32).item() == pytest.approx(2.0**70)


@pytest.mark.parametrize(
    "make", [tl.from_numpy, tl.tensor, tl.Tensor], ids=["from_numpy", "tensor", "Tensor"]
)
def test_big_endian_arrays_are_refused(make):
    with pytest.raises(ValueError, match="byte order"):
        make(np.arange(3, dtype=">f4"))
    native = make(np.arange(3, dtype=">f4").astype("=f4"))
    assert native.tolist() == [0.0, 1.0, 2.0]


PROBE = {
    "tensor([2**63])": lambda lib: lib.tensor([2**63]),
    "tensor(2**70, float32)": lambda lib: lib.tensor([2**70], dtype=lib.float32),
    "from_numpy(big-endian)": lambda lib: lib.from_numpy(np.arange(3, dtype=">f4")),
    "tensor(big-endian)": lambda lib: lib.tensor(np.arange(3, dtype=">f4")),
    # an integer dtype: PyTorch cuts the arguments to integers first (review 7)
    "arange(0.5, 3.7, 1, int64)": lambda lib: lib.arange(0.5, 3.7, 1, dtype=lib.int64),
    "arange(0, 5, 2.5, int64)": lambda lib: lib.arange(0, 5, 2.5, dtype=lib.int64),
    "arange(3.9, 0.1, -1, int64)": lambda lib: lib.arange(3.9, 0.1, -1, dtype=lib.int64),
    "arange(0, 2, 0.5, int64)": lambda lib: lib.arange(0, 2, 0.5, dtype=lib.int64),
    "arange(-2.7, 2.2, 1.0, int32)": lambda lib: lib.arange(-2.7, 2.2, 1.0, dtype=lib.int32),
    "arange(0, 2, 0.5, uint8)": lambda lib: lib.arange(0, 2, 0.5, dtype=lib.uint8),
    "arange(-3, 3, uint8)": lambda lib: lib.arange(-3, 3, dtype=lib.uint8),
    "arange(0, 3, bool)": lambda lib: lib.arange(0, 3, dtype=lib.bool),
    "arange(0.5, 3.7, out=int64)": lambda lib: lib.arange(
        0.5, 3.7, 1, out=lib.zeros(0, dtype=lib.int64)
    ),
    # bounds on the wrong side of the step, infinite bounds, a zero or NaN step: refused
    "arange(0, 5, -1)": lambda lib: lib.arange(0, 5, -1),
    "arange(1.5, 0.5, 0.5)": lambda lib: lib.arange(1.5, 0.5, 0.5),
    "arange(0, 0, -1)": lambda lib: lib.arange(0, 0, -1),
    "arange(0, inf)": lambda lib: lib.arange(0, float("inf")),
    "arange(0, 5, 0)": lambda lib: lib.arange(0, 5, 0),
    "arange(0, 5, nan)": lambda lib: lib.arange(0, 5, float("nan")),
    # a 0-d tensor bound: int64 for an integer or bool tensor, else the default float dtype
    # (the review's 3: the masking idiom arange(lengths.max()))
    "arange(lengths.max())": lambda lib: lib.arange(lib.tensor([2, 4, 3]).max()),
    "arange(int32 0-d)": lambda lib: lib.arange(lib.tensor(3, dtype=lib.int32)),
    "arange(uint8 0-d, 9, int64 0-d)": lambda lib: lib.arange(
        lib.tensor(1, dtype=lib.uint8), 9, lib.tensor(3)
    ),
    "arange(bool 0-d, 3)": lambda lib: lib.arange(lib.tensor(True), 3),
    "arange(True, 3)": lambda lib: lib.arange(True, 3),
    "arange(float64 0-d)": lambda lib: lib.arange(lib.tensor(2.5, dtype=lib.float64)),
    "arange(0, int 0-d, 0.5)": lambda lib: lib.arange(0, lib.tensor(2), 0.5),
    "arange(1-d tensor)": lambda lib: lib.arange(lib.tensor([3])),
    "range(int 0-d, int 0-d)": lambda lib: lib.range(lib.tensor(0), lib.tensor(3)),
    "range(0, 1-d tensor)": lambda lib: lib.range(0, lib.tensor([3])),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(PROBE))
def test_matches_pytorch(case):
    assert_matches_pytorch(case, PROBE[case])


# torch.fill: a value tensor gets the summed gradient, the input a zero one (it was detached)
def test_fill_has_pytorchs_gradients():
    x = tl.ones(3, requires_grad=True)
    value = tl.tensor(2.0, dtype=tl.float64, requires_grad=True)
    out = tl.fill(x, value)
    assert out.dtype == tl.float32 and out.tolist() == [2.0, 2.0, 2.0] and out.requires_grad
    (out * tl.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0] and value.grad.item() == 6.0
    assert value.grad.dtype == tl.float64
    base = tl.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert tl.autograd.gradcheck(lambda a, v: tl.fill(a, v), (base, value))
    assert tl.fill(tl.zeros(2, dtype=tl.int64), 2.7).tolist() == [2, 2]


@pytest.mark.parity
def test_fill_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (tl, torch):
        x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        value = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        (lib.fill(x, value) * lib.arange(6.0, dtype=lib.float64).reshape(2, 3)).sum().backward()
        grads.append((x.grad.numpy(), value.grad.numpy()))
    for ours, theirs in zip(*grads, strict=True):
        np.testing.assert_array_equal(ours, theirs)


# Tensor.new_* take PyTorch's keywords (device, layout, pin_memory too)
@pytest.mark.parity
@pytest.mark.parametrize("name, args", [("new_zeros", (2, 3)), ("new_ones", ((2, 3),)),
                                        ("new_empty", (2,)), ("new_full", ((2,), 7.0)),
                                        ("new_tensor", ([1.0, 2.0],))])
def test_new_methods_take_pytorchs_keywords(name, args):
    torch = pytest.importorskip("torch")
    outs = []
    for lib in (tl, torch):
        base = lib.ones(1, dtype=lib.float64)
        # (new_tensor takes neither layout nor pin_memory in PyTorch)
        more = {} if name == "new_tensor" else {"layout": lib.strided, "pin_memory": False}
        out = getattr(base, name)(*args, dtype=lib.float32, device="cpu", requires_grad=True,
                                  **more)
        outs.append(out)
    ours, theirs = outs
    assert ours.shape == tuple(theirs.shape) and ours.requires_grad and ours.dtype == tl.float32
    if name != "new_empty":
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def test_arange_with_an_integer_dtype_counts_as_pytorch():
    """PyTorch 2.13's answers: the arguments cut toward zero, then counted in int64."""
    assert tl.arange(0.5, 3.7, 1, dtype=tl.int64).tolist() == [0, 1, 2]
    assert tl.arange(-0.5, 3, 1, dtype=tl.int64).tolist() == [0, 1, 2]
    assert tl.arange(0, 5, 1.5, dtype=tl.int64).tolist() == [0, 1, 2, 3, 4]
    assert tl.arange(-2.7, 2.2, 1.0, dtype=tl.int32).tolist() == [-2, -1, 0, 1, 2]
    assert tl.arange(0, 300, 100, dtype=tl.int8).tolist() == [0, 100, -56]
    assert tl.arange(10**18, 10**18 + 5, 2).tolist() == [10**18, 10**18 + 2, 10**18 + 4]
    with pytest.raises(ValueError, match="step must be nonzero"):
        tl.arange(0, 2, 0.5, dtype=tl.int64)
    assert tl.arange(0.5, 3.7, 0.7, dtype=tl.float64).tolist() == pytest.approx(
        [0.5, 1.2, 1.9, 2.6, 3.3]
    )


@pytest.mark.parity
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda lib: lib.arange(0.0, float("inf")), "unsupported range: 0 -> inf"),
        (lambda lib: lib.arange(lib.tensor(0.0), lib.tensor(float("inf"))), "range: 0 -> inf"),
        (lambda lib: lib.arange(123456789, float("inf")), r"range: 1\.23457e\+08 -> inf"),
        (lambda lib: lib.arange(-float("inf"), 0.25), "unsupported range: -inf -> 0.25"),
        (lambda lib: lib.range(1e-05, float("nan")), "unsupported range: 1e-05 -> nan"),
        (lambda lib: lib.arange(lib.tensor([3])), r"argument 'end' \(position 1\) must be Number"),
        (lambda lib: lib.range(lib.tensor([0]), 3), r"argument 'start' \(position 1\) must be"),
    ],
)
def test_arange_and_range_messages_match_pytorch(make, message):
    """The bounds printed as C++ prints a double (``0``, ``1.23457e+08``), as PyTorch does; a
    tensor with dims refused where a number is wanted (the review's 3 and 8)."""
    torch = pytest.importorskip("torch")
    for lib in (torch, tl):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # range's deprecation warning
            with pytest.raises((RuntimeError, TypeError), match=message):
                make(lib)
