"""What the concept files share for their standing probes against PyTorch (issue 10's cases).

A case is a function of the library module (``tensorlib`` or ``torch``) that returns a tensor or
raises; :func:`assert_matches_pytorch` runs it on both libraries and compares which error, if any,
and otherwise the dtype and the values. The expected values in the concept files' plain tests are
PyTorch 2.13's, written out so that those tests run without torch.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorlib as tl

NAN = float("nan")
NEG = -np.inf


def functional(lib: Any) -> Any:
    """``nn.functional`` of ``lib``."""
    return tl.nn.functional if lib is tl else __import__("torch").nn.functional


def grad_of(lib: Any, values: Any, fn: Callable[[Any], Any], dtype: Any = None) -> Any:
    """The gradient of ``fn(x).sum()`` at ``x = values`` (float64 unless ``dtype``)."""
    x = lib.tensor(np.array(values, dtype=dtype or np.float64), requires_grad=True)
    fn(x).sum().backward()
    return x.grad


def changed_after_use(lib: Any, op: Callable[[Any, Any, Any], Any], kind: str) -> Any:
    """Use an index (``kind="index"``) or a mask in ``op``, change it in place, then backward: x's
    gradient."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    other = lib.tensor([0, 0]) if kind == "index" else lib.tensor([True, False, True])
    y = op(lib, x, other).sum()
    with lib.no_grad():
        other.fill_(1 if kind == "index" else False)
    y.backward()
    return x.grad


def _outcome(lib: Any, case: Callable[[Any], Any]) -> tuple[str, Any, Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # both warn on a uint8 index
            value = case(lib)
    except Exception as error:  # noqa: BLE001 - the probe compares which error, if any
        return type(error).__name__, None, None
    return (
        "value",
        np.asarray(value.detach().numpy(), dtype=np.float64),
        str(value.dtype).removeprefix("torch."),
    )


def assert_matches_pytorch(name: str, case: Callable[[Any], Any]) -> None:
    """``case`` gives the same error, or the same dtype and values, on tensorlib and on PyTorch."""
    torch = pytest.importorskip("torch")
    ours, theirs = _outcome(tl, case), _outcome(torch, case)
    assert ours[0] == theirs[0], f"{name}: tensorlib gives {ours[0]}, PyTorch {theirs[0]}"
    if ours[0] == "value":
        assert ours[2] == theirs[2], f"{name}: dtype {ours[2]}, PyTorch {theirs[2]}"
        rtol = 5e-3 if "float16" in name else 1e-5
        np.testing.assert_allclose(
            ours[1], theirs[1], rtol=rtol, atol=1e-7, equal_nan=True, err_msg=name
        )


def normal_arrays(shapes: list[tuple[int, ...]], seed: int) -> list[np.ndarray]:
    """Standard normal float64 arrays of ``shapes``, from one generator seeded ``seed``."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


def value_and_gradients(
    lib: Any, fn: Callable[..., Any], arrays: list[np.ndarray], dtype: Any
) -> tuple[np.ndarray, list[np.ndarray]]:
    """``fn(lib, *inputs)`` and the inputs' gradients of ``sum(fn(lib, *inputs) * w)`` for fixed
    weights ``w``, the inputs ``arrays`` as tensors of ``dtype``."""
    inputs = [lib.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    out = fn(lib, *inputs)
    weights = np.random.default_rng(1).standard_normal(tuple(out.shape))
    (out * lib.tensor(weights, dtype=dtype)).sum().backward()
    return out.detach().numpy(), [t.grad.numpy() for t in inputs]


def assert_values_and_gradients_match_pytorch(
    fn: Callable[..., Any],
    shapes: list[tuple[int, ...]],
    seed: int,
    dtype: str,
    tolerances: tuple[float, float, float, float],
) -> None:
    """``fn(lib, *tensors)`` and its inputs' gradients agree between tensorlib and PyTorch, in
    ``dtype`` ("float64" or "float32"), within ``(rtol, atol)`` for the values and
    ``(rtol, atol)`` for the gradients (``tolerances``, in that order); dtypes agree too."""
    torch = pytest.importorskip("torch")
    arrays = normal_arrays(shapes, seed)
    (ours, our_grads), (theirs, their_grads) = (
        value_and_gradients(lib, fn, arrays, getattr(lib, dtype)) for lib in (tl, torch)
    )
    value_rtol, value_atol, grad_rtol, grad_atol = tolerances
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.dtype(dtype)
    np.testing.assert_allclose(ours, theirs, rtol=value_rtol, atol=value_atol)
    for mine, reference in zip(our_grads, their_grads, strict=True):
        assert mine.dtype == np.dtype(dtype)
        np.testing.assert_allclose(mine, reference, rtol=grad_rtol, atol=grad_atol)
