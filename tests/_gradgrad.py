"""What the second-order test files share: the gradgradcheck of a recorded backward pass.

A case is ``(op, arrays, wrt)``: ``op(lib, *tensors)`` returns one tensor, ``arrays`` are its
float64 inputs and ``wrt`` the positions of those to differentiate. :func:`check_gradgrad`
records the first-order gradient ``g(x, u)`` with ``create_graph=True``, checks that its value
is the first-order pass's, and compares the gradient of ``<g, v>`` in each input and in the
upstream gradient ``u`` with central differences of the first-order gradient.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import tensorlib as tl

Case = tuple[Callable[..., Any], list[np.ndarray], tuple[int, ...]]


def upstream(shape: tuple[int, ...]) -> np.ndarray:
    """A fixed upstream gradient of ``shape``, no two entries alike."""
    return np.cos(np.arange(int(np.prod(shape))) + 1.0).reshape(shape)


def probe(shape: tuple[int, ...]) -> np.ndarray:
    """A fixed direction ``v`` of ``shape`` to pair the first-order gradient with."""
    return np.sin(np.arange(int(np.prod(shape))) + 2.0).reshape(shape)


def central(f: Callable[[np.ndarray], float], point: np.ndarray, step: float = 1e-6) -> np.ndarray:
    """Central differences of the number ``f(array)`` at ``point``, one per element."""
    out = np.zeros(point.shape)
    for i in np.ndindex(point.shape):
        up, down = point.copy(), point.copy()
        up[i] += step
        down[i] -= step
        out[i] = (f(up) - f(down)) / (2 * step)
    return out


def first_order(case: Case, arrays: list[np.ndarray], u: np.ndarray) -> list[np.ndarray]:
    """The gradients by the first-order pass (arrays), with ``u`` as the output's gradient."""
    op, _, wrt = case
    ins = [tl.tensor(a, requires_grad=k in wrt) for k, a in enumerate(arrays)]
    grads = tl.autograd.grad(op(tl, *ins), [ins[k] for k in wrt], grad_outputs=tl.tensor(u))
    return [g.numpy() for g in grads]


def check_gradgrad(case: Case, first_rtol: float, first_atol: float) -> None:
    """d/dz <g(x, u), v> for z = each input and the upstream gradient u, where g is recorded
    (create_graph=True), against central differences of the first-order gradient."""
    op, arrays, wrt = case
    ins = [tl.tensor(a, requires_grad=k in wrt) for k, a in enumerate(arrays)]
    out = op(tl, *ins)
    u_array = upstream(tuple(out.shape))
    u = tl.tensor(u_array, requires_grad=True)
    xs = [ins[k] for k in wrt]
    grads = tl.autograd.grad(out, xs, grad_outputs=u, create_graph=True)
    plain = first_order(case, arrays, u_array)
    for g, p in zip(grads, plain, strict=True):  # the recorded value is the first-order one
        np.testing.assert_allclose(g.detach().numpy(), p, rtol=first_rtol, atol=first_atol)
    probes = [probe(tuple(g.shape)) for g in grads]
    total = sum((g * tl.tensor(v)).sum() for g, v in zip(grads, probes, strict=True))
    seconds = tl.autograd.grad(total, [*xs, u], allow_unused=True)

    def pairing(moved: list[np.ndarray], upstream_grad: np.ndarray) -> float:
        grads = first_order(case, moved, upstream_grad)
        return sum(float(np.vdot(g, v)) for g, v in zip(grads, probes, strict=True))

    for slot, k in enumerate(wrt):
        def at(point: np.ndarray, k: int = k) -> float:
            moved = [a.copy() for a in arrays]
            moved[k] = point
            return pairing(moved, u_array)

        got = seconds[slot]
        got = np.zeros(arrays[k].shape) if got is None else got.numpy()
        np.testing.assert_allclose(got, central(at, arrays[k]), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(seconds[-1].numpy(), central(lambda v: pairing(arrays, v),
                                                            u_array), rtol=1e-6, atol=1e-7)
