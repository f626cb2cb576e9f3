"""Assigning ``Tensor.grad`` checks type, shape and dtype at assignment, as PyTorch does."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

_SELF = object()
_BAD_GRADS = [
    ("a number", 5, TypeError, "expected to be a Tensor or None but got grad of type int"),
    ("an ndarray", np.ones(3, np.float32), TypeError, "expected to be a Tensor or None"),
    (
        "another shape",
        "ones(3, 3)",
        RuntimeError,
        r"gradient of size \[3, 3\] to a tensor of size \[3\]",
    ),
    (
        "another dtype",
        "ones(3, float64)",
        RuntimeError,
        "gradient with dtype float64 to a tensor with dtype float32",
    ),
    ("the tensor itself", _SELF, RuntimeError, "can't assign Variable as its own grad"),
]


def _bad_grad(lib, spec, x):
    if spec is _SELF:
        return x
    if isinstance(spec, str):
        return lib.ones(3, 3) if spec == "ones(3, 3)" else lib.ones(3, dtype=lib.float64)
    return spec


@pytest.mark.parametrize(
    ("name", "spec", "error", "match"), _BAD_GRADS, ids=[case[0] for case in _BAD_GRADS]
)
def test_assigning_a_wrong_grad_raises_at_once(name, spec, error, match):
    x = tl.ones(3, requires_grad=True)
    with pytest.raises(error, match=match):
        x.grad = _bad_grad(tl, spec, x)
    assert x.grad is None


def test_assigning_a_right_grad_or_none_works():
    x = tl.ones(3, requires_grad=True)
    x.grad = tl.full((3,), 2.0)
    (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]
    x.grad = None
    assert x.grad is None
    counts = tl.tensor([1, 2])
    counts.grad = tl.tensor([0, 0])  # an integer tensor may hold an integer "gradient", as in torch
    assert counts.grad.dtype == np.int64


@pytest.mark.parity
@pytest.mark.parametrize(
    ("name", "spec", "error", "match"), _BAD_GRADS, ids=[case[0] for case in _BAD_GRADS]
)
def test_assigning_a_wrong_grad_raises_as_in_pytorch(name, spec, error, match):
    torch = pytest.importorskip("torch")
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(error):
        x.grad = _bad_grad(torch, spec, x)
