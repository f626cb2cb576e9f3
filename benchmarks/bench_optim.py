"""Optimizers: one AdamW step over the parameters of a small GPT (818k parameters, 53 tensors) and
of an MLP 64-256-256-10.

The GPT's parameters have the shapes of the suite's GPT workload (vocabulary 65, context 64,
width 128, 4 heads, 4 pre-norm blocks with a 4x MLP, untied head), with random gradients.
tensorlib's AdamW (flat buffers: gather the gradients, then a fixed number of in-place numpy passes
over all parameters) against torch.optim.AdamW with one thread in its three CPU implementations: the
default per-parameter loop, ``foreach=True`` (multi-tensor ops) and ``fused=True`` (one kernel). The
numpy column is the update alone on flat arrays that already hold the gradients (the floor).
"""

from __future__ import annotations

import numpy as np
from _timing import row, torch

import tensorlib as tl
from tensorlib import optim

VOCAB, CONTEXT, WIDTH, BLOCKS = 65, 64, 128, 4


def gpt_shapes() -> list[tuple[int, ...]]:
    shapes: list[tuple[int, ...]] = [(VOCAB, WIDTH), (CONTEXT, WIDTH)]
    for _ in range(BLOCKS):
        shapes += [
            (WIDTH,),
            (WIDTH,),
            (3 * WIDTH, WIDTH),
            (3 * WIDTH,),
            (WIDTH, WIDTH),
            (WIDTH,),
            (WIDTH,),
            (WIDTH,),
            (4 * WIDTH, WIDTH),
            (4 * WIDTH,),
            (WIDTH, 4 * WIDTH),
            (WIDTH,),
        ]
    return shapes + [(WIDTH,), (WIDTH,), (VOCAB, WIDTH)]


def mlp_shapes() -> list[tuple[int, ...]]:
    sizes = (64, 256, 256, 10)
    return [
        shape
        for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True)
        for shape in ((n_out, n_in), (n_out,))
    ]


def _numpy_adamw(size: int, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=1e-2):
    rng = np.random.default_rng(0)
    param, grad = (
        rng.standard_normal(size, dtype=np.float32),
        rng.standard_normal(size, dtype=np.float32),
    )
    m, v, tmp = np.zeros(size, np.float32), np.zeros(size, np.float32), np.empty(size, np.float32)
    step = [0]

    def update(param=param, grad=grad, m=m, v=v, tmp=tmp):
        step[0] += 1
        param *= 1 - lr * weight_decay
        np.subtract(grad, m, out=tmp)
        tmp *= 1 - beta1
        m += tmp
        v *= beta2
        np.multiply(grad, grad, out=tmp)
        tmp *= 1 - beta2
        v += tmp
        np.sqrt(v, out=tmp)
        tmp /= (1 - beta2 ** step[0]) ** 0.5
        tmp += eps
        np.divide(m, tmp, out=tmp)
        tmp *= -lr / (1 - beta1 ** step[0])
        param += tmp

    return update


def _rows(label: str, shapes: list[tuple[int, ...]]) -> list[dict]:
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    params = [tl.nn.Parameter(tl.tensor(v)) for v in values]
    for p, g in zip(params, grads, strict=True):
        p.grad = tl.tensor(g)
    ours = optim.AdamW(params, lr=1e-3)
    count = sum(int(np.prod(s)) for s in shapes)
    name = f"AdamW step {label} ({count / 1e3:.0f}k params, {len(shapes)} tensors)"
    floor = _numpy_adamw(count)
    if torch is None:
        return [row(name, ours.step, floor)]
    rows = []
    for variant, options in (
        ("torch loop", {}),
        ("torch foreach", {"foreach": True}),
        ("torch fused", {"fused": True}),
    ):
        theirs_params = [torch.nn.Parameter(torch.tensor(v)) for v in values]
        for p, g in zip(theirs_params, grads, strict=True):
            p.grad = torch.tensor(g)
        try:
            theirs = torch.optim.AdamW(theirs_params, lr=1e-3, **options)
            theirs.step()
        except (RuntimeError, ValueError):  # a variant this build lacks
            continue
        rows.append(row(f"{name} vs {variant}", ours.step, floor, theirs.step))
    return rows


def run() -> list[dict]:
    return _rows("GPT", gpt_shapes()) + _rows("MLP", mlp_shapes())
