"""Autograd overhead: small float32 ops with grad, forward and forward+backward, and a 1,000-op
chain.

On 4x4 tensors the arithmetic is negligible, so these rows measure the per-op bookkeeping of
the engine (building the graph node, the topological sort, accumulating .grad) against a bare
numpy op (the floor: the same arithmetic, no graph) and torch's C++ autograd.
The "fwd+bwd" numpy column is the hand-written forward and backward of the same op.
"""

from __future__ import annotations

import numpy as np
from _timing import row, torch

import tensorlib as tl

CHAIN = 1000


def _leaves(shape=(4, 4), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=shape).astype(np.float32)
    b = rng.normal(size=shape).astype(np.float32)
    return a, b


def _small_ops() -> list[dict]:
    a_np, b_np = _leaves()
    g_np = np.ones_like(a_np)
    a, b = tl.tensor(a_np, requires_grad=True), tl.tensor(b_np, requires_grad=True)
    g = tl.tensor(g_np)
    if torch is not None:
        at, bt = torch.tensor(a_np, requires_grad=True), torch.tensor(b_np, requires_grad=True)
        gt = torch.tensor(g_np)

    forward = {
        "add": (lambda: a + b, lambda: a_np + b_np, lambda: at + bt),
        "mul": (lambda: a * b, lambda: a_np * b_np, lambda: at * bt),
        "matmul": (lambda: a @ b, lambda: a_np @ b_np, lambda: at @ bt),
        "relu": (lambda: a.relu(), lambda: np.maximum(a_np, 0), lambda: at.relu()),
        "sum": (lambda: a.sum(), lambda: a_np.sum(), lambda: at.sum()),
        # a tensor divisor pays for np.errstate (x/0 is inf silently, as in torch): about 1 us
        "div": (lambda: a / b, lambda: a_np / b_np, lambda: at / bt),
    }

    def tl_fb(op):
        def step():
            a.grad = b.grad = None
            y = op()
            y.backward() if y.ndim == 0 else y.backward(gradient=g)

        return step

    def torch_fb(op):
        def step():
            at.grad = bt.grad = None
            y = op()
            y.backward() if y.ndim == 0 else y.backward(gradient=gt)

        return step

    numpy_fb = {  # forward plus the hand-derived backward of each op
        "add": lambda: (a_np + b_np, g_np.copy(), g_np.copy()),
        "mul": lambda: (a_np * b_np, g_np * b_np, g_np * a_np),
        "matmul": lambda: (a_np @ b_np, g_np @ b_np.T, a_np.T @ g_np),
        "relu": lambda: (np.maximum(a_np, 0), g_np * (a_np > 0)),
        "sum": lambda: (a_np.sum(), np.ones_like(a_np) * np.float32(1.0)),
        "div": lambda: (a_np / b_np, g_np / b_np, -g_np * a_np / (b_np * b_np)),
    }

    rows = []
    for name, (ours, bare, theirs) in forward.items():
        rows.append(row(f"{name} 4x4 fwd", ours, bare, theirs if torch is not None else None))
    for name, (ours, _bare, theirs) in forward.items():
        rows.append(
            row(
                f"{name} 4x4 fwd+bwd",
                tl_fb(ours),
                numpy_fb[name],
                torch_fb(theirs) if torch is not None else None,
            )
        )
    return rows


def _chain() -> list[dict]:
    a_np, _ = _leaves()
    x = tl.tensor(a_np, requires_grad=True)

    def ours():
        x.grad = None
        y = x
        for i in range(CHAIN):
            y = y * 0.999 if i % 2 else y + 0.001
        y.sum().backward()

    def bare():
        y = a_np
        for i in range(CHAIN):
            y = y * np.float32(0.999) if i % 2 else y + np.float32(0.001)
        grad = np.ones_like(a_np)
        for i in reversed(range(CHAIN)):
            if i % 2:
                grad = grad * np.float32(0.999)
        return y.sum(), grad

    theirs = None
    if torch is not None:
        xt = torch.tensor(a_np, requires_grad=True)

        def theirs():
            xt.grad = None
            y = xt
            for i in range(CHAIN):
                y = y * 0.999 if i % 2 else y + 0.001
            y.sum().backward()

    total = row(f"chain of {CHAIN} ops fwd+bwd", ours, bare, theirs)
    per_op = {
        k: (v / CHAIN if isinstance(v, float) else v) for k, v in total.items() if k != "name"
    }
    return [total, {"name": "  per op of the chain", **per_op}]


def _in_place_step() -> list[dict]:
    """An SGD step on one 64x64 parameter: the in-place update raises the version counter."""
    rng = np.random.default_rng(1)
    p_np, g_np = rng.normal(size=(2, 64, 64)).astype(np.float32)
    p, g = tl.tensor(p_np, requires_grad=True), tl.tensor(g_np)

    def ours():
        with tl.no_grad():
            p.sub_(g, alpha=0.01)

    def bare():
        np.subtract(p_np, g_np * np.float32(0.01), out=p_np)

    theirs = None
    if torch is not None:
        pt, gt = torch.tensor(p_np, requires_grad=True), torch.tensor(g_np)

        def theirs():
            with torch.no_grad():
                pt.sub_(gt, alpha=0.01)

    return [row("sgd step sub_ 64x64", ours, bare, theirs)]


def run() -> list[dict]:
    """Rows for benchmarks/run.py: seconds per call of tensorlib, numpy and torch."""
    return _small_ops() + _chain() + _in_place_step()
