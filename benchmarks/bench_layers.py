"""Layers: forward and forward+backward of an MLP 64-256-256-10 (batch 128), a Conv2d 1->8 (batch
32, 28x28, k=3, padding 1) and five ImageNet-sized Conv2d layers (batch 16, no numpy column).

tensorlib's layers against torch's with the same weights and one thread each, and against
a bare numpy implementation that does the same arithmetic (for "fwd+bwd": the hand-written
backward too), which is the floor for a numpy-based library. float32 throughout.
"""

from __future__ import annotations

import numpy as np
from _timing import row, torch

import tensorlib as tl
from tensorlib import nn

MLP_SIZES = (64, 256, 256, 10)
MLP_BATCH = 128
CONV_BATCH, CONV_IN, CONV_OUT, CONV_SIZE, KERNEL, PADDING = 32, 1, 8, 28, 3, 1


def _linear_weights(model) -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (m.weight.numpy().copy(), m.bias.numpy().copy()) for m in model if isinstance(m, nn.Linear)
    ]


def _mlp_rows() -> list[dict]:
    rng = np.random.default_rng(0)
    tl.manual_seed(0)
    model = nn.MLP(MLP_SIZES[0], list(MLP_SIZES[1:-1]), MLP_SIZES[-1])  # ReLU between layers
    weights = _linear_weights(model)
    x_np = rng.standard_normal((MLP_BATCH, MLP_SIZES[0])).astype(np.float32)
    g_np = rng.standard_normal((MLP_BATCH, MLP_SIZES[-1])).astype(np.float32)
    x, g = tl.tensor(x_np, requires_grad=True), tl.tensor(g_np)

    def ours_fwd():
        return model(x)

    def ours_fb():
        model.zero_grad()
        x.grad = None
        model(x).backward(gradient=g)

    def numpy_fwd():
        h = x_np
        for i, (w, b) in enumerate(weights):
            h = h @ w.T + b
            if i < len(weights) - 1:
                h = np.maximum(h, 0)
        return h

    def numpy_fb():
        inputs, h = [], x_np
        for i, (w, b) in enumerate(weights):
            inputs.append(h)
            h = h @ w.T + b
            if i < len(weights) - 1:
                h = np.maximum(h, 0)
        grad, grads = g_np, []
        for i in reversed(range(len(weights))):
            w, _ = weights[i]
            if i < len(weights) - 1:
                grad = grad * (inputs[i + 1] > 0)  # ReLU: its output is the next layer's input
            grads.append((grad.T @ inputs[i], grad.sum(axis=0)))
            grad = grad @ w
        return grad, grads

    theirs_fwd = theirs_fb = None
    if torch is not None:
        layers = []
        for i, (w, b) in enumerate(weights):
            linear = torch.nn.Linear(w.shape[1], w.shape[0])
            with torch.no_grad():
                linear.weight.copy_(torch.from_numpy(w))
                linear.bias.copy_(torch.from_numpy(b))
            layers.append(linear)
            if i < len(weights) - 1:
                layers.append(torch.nn.ReLU())
        reference = torch.nn.Sequential(*layers)
        xt, gt = torch.tensor(x_np, requires_grad=True), torch.from_numpy(g_np)
        _check_same(ours_fwd().numpy(), reference(xt).detach().numpy(), "MLP")
        reference(xt).backward(gt)
        dx, grads = numpy_fb()
        _check_same(dx, xt.grad.numpy(), "MLP numpy floor dX")
        _check_same(grads[-1][0], reference[0].weight.grad.numpy(), "MLP numpy floor dW of layer 0")

        def theirs_fwd():
            return reference(xt)

        def theirs_fb():
            reference.zero_grad()
            xt.grad = None
            reference(xt).backward(gt)

    name = "MLP " + "-".join(map(str, MLP_SIZES)) + f" b{MLP_BATCH}"
    return [
        row(f"{name} fwd", ours_fwd, numpy_fwd, theirs_fwd),
        row(f"{name} fwd+bwd", ours_fb, numpy_fb, theirs_fb),
    ]


def _im2col(xp: np.ndarray, k: int, h_out: int, w_out: int) -> np.ndarray:
    """(N, C*k*k, H_out*W_out) patches of the padded batch ``xp``, stride 1."""
    n, c = xp.shape[:2]
    cols = np.empty((n, c, k, k, h_out, w_out), dtype=xp.dtype)
    for u in range(k):
        for v in range(k):
            cols[:, :, u, v] = xp[:, :, u : u + h_out, v : v + w_out]
    return cols.reshape(n, c * k * k, h_out * w_out)


def _conv_rows() -> list[dict]:
    rng = np.random.default_rng(1)
    tl.manual_seed(1)
    layer = nn.Conv2d(CONV_IN, CONV_OUT, KERNEL, padding=PADDING)
    w_np, b_np = layer.weight.numpy().copy(), layer.bias.numpy().copy()
    x_np = rng.standard_normal((CONV_BATCH, CONV_IN, CONV_SIZE, CONV_SIZE)).astype(np.float32)
    size_out = CONV_SIZE + 2 * PADDING - KERNEL + 1
    g_np = rng.standard_normal((CONV_BATCH, CONV_OUT, size_out, size_out)).astype(np.float32)
    x, g = tl.tensor(x_np, requires_grad=True), tl.tensor(g_np)
    w_mat = w_np.reshape(CONV_OUT, -1)

    def ours_fwd():
        return layer(x)

    def ours_fb():
        layer.zero_grad()
        x.grad = None
        layer(x).backward(gradient=g)

    def numpy_fwd():
        xp = np.pad(x_np, ((0, 0), (0, 0), (PADDING, PADDING), (PADDING, PADDING)))
        cols = _im2col(xp, KERNEL, size_out, size_out)
        y = np.matmul(w_mat, cols) + b_np[:, None]
        return y.reshape(CONV_BATCH, CONV_OUT, size_out, size_out)

    def numpy_fb():
        xp = np.pad(x_np, ((0, 0), (0, 0), (PADDING, PADDING), (PADDING, PADDING)))
        cols = _im2col(xp, KERNEL, size_out, size_out)
        y = (np.matmul(w_mat, cols) + b_np[:, None]).reshape(g_np.shape)
        g_mat = g_np.reshape(CONV_BATCH, CONV_OUT, -1)
        # per-image products summed: far faster than one tensordot over (N, P), which copies
        dw = np.matmul(g_mat, cols.transpose(0, 2, 1)).sum(axis=0).reshape(w_np.shape)
        db = g_mat.sum(axis=(0, 2))
        dcols = np.matmul(w_mat.T, g_mat).reshape(
            CONV_BATCH, CONV_IN, KERNEL, KERNEL, size_out, size_out
        )
        dxp = np.zeros_like(xp)
        for u in range(KERNEL):  # col2im: scatter each kernel offset back
            for v in range(KERNEL):
                dxp[:, :, u : u + size_out, v : v + size_out] += dcols[:, :, u, v]
        dx = dxp[:, :, PADDING:-PADDING, PADDING:-PADDING]
        return y, dx, dw, db

    theirs_fwd = theirs_fb = None
    if torch is not None:
        reference = torch.nn.Conv2d(CONV_IN, CONV_OUT, KERNEL, padding=PADDING)
        with torch.no_grad():
            reference.weight.copy_(torch.from_numpy(w_np))
            reference.bias.copy_(torch.from_numpy(b_np))
        xt, gt = torch.tensor(x_np, requires_grad=True), torch.from_numpy(g_np)
        _check_same(ours_fwd().numpy(), reference(xt).detach().numpy(), "Conv2d")
        reference(xt).backward(gt)
        _, dx, dw, db = numpy_fb()
        for what, mine, auto in [
            ("dX", dx, xt.grad),
            ("dW", dw, reference.weight.grad),
            ("db", db, reference.bias.grad),
        ]:
            _check_same(mine, auto.numpy(), f"Conv2d numpy floor {what}")

        def theirs_fwd():
            return reference(xt)

        def theirs_fb():
            reference.zero_grad()
            xt.grad = None
            reference(xt).backward(gt)

    _check_same(ours_fwd().numpy(), numpy_fwd(), "Conv2d numpy floor")
    name = (
        f"Conv2d {CONV_IN}->{CONV_OUT} k{KERNEL} p{PADDING} {CONV_SIZE}x{CONV_SIZE} b{CONV_BATCH}"
    )
    return [
        row(f"{name} fwd", ours_fwd, numpy_fwd, theirs_fwd),
        row(f"{name} fwd+bwd", ours_fb, numpy_fb, theirs_fb),
    ]


# ImageNet-sized convolutions (chapter 4, section 9.9): name, batch, in channels, size, out
# channels, kernel, stride, padding, groups
IMAGENET_CONVS = [
    ("Conv2d 64->64 k3 p1 56x56 b16", 16, 64, 56, 64, 3, 1, 1, 1),
    ("Conv2d 3->64 k7 s2 p3 224x224 b16", 16, 3, 224, 64, 7, 2, 3, 1),
    ("Conv2d 512->512 k3 p1 7x7 b16", 16, 512, 7, 512, 3, 1, 1, 1),
    ("Conv2d 256->64 k1 14x14 b16", 16, 256, 14, 64, 1, 1, 0, 1),
    ("Conv2d depthwise 32 k3 p1 56x56 b16", 16, 32, 56, 32, 3, 1, 1, 32),
]


def _imagenet_conv_rows() -> list[dict]:
    """tensorlib's and torch's Conv2d on the shapes of ``IMAGENET_CONVS``, no numpy floor."""
    rows = []
    for name, batch, cin, size, cout, kernel, stride, padding, groups in IMAGENET_CONVS:
        rng = np.random.default_rng(2)
        tl.manual_seed(2)
        layer = nn.Conv2d(cin, cout, kernel, stride=stride, padding=padding, groups=groups)
        x_np = rng.standard_normal((batch, cin, size, size)).astype(np.float32)
        x = tl.tensor(x_np, requires_grad=True)
        g = tl.tensor(rng.standard_normal(tuple(layer(x).shape)).astype(np.float32))

        def ours_fwd(layer=layer, x=x):
            with tl.no_grad():
                return layer(x)

        def ours_fb(layer=layer, x=x, g=g):
            layer.zero_grad()
            x.grad = None
            layer(x).backward(gradient=g)

        theirs_fwd = theirs_fb = None
        if torch is not None:
            reference = torch.nn.Conv2d(
                cin, cout, kernel, stride=stride, padding=padding, groups=groups
            )
            with torch.no_grad():
                reference.weight.copy_(torch.from_numpy(layer.weight.numpy()))
                reference.bias.copy_(torch.from_numpy(layer.bias.numpy()))
            xt, gt = torch.tensor(x_np, requires_grad=True), torch.from_numpy(g.numpy())
            _check_same(ours_fwd().numpy(), reference(xt).detach().numpy(), name)

            def theirs_fwd(reference=reference, xt=xt):
                with torch.no_grad():
                    return reference(xt)

            def theirs_fb(reference=reference, xt=xt, gt=gt):
                reference.zero_grad()
                xt.grad = None
                reference(xt).backward(gt)

        rows += [
            row(f"{name} fwd", ours_fwd, None, theirs_fwd),
            row(f"{name} fwd+bwd", ours_fb, None, theirs_fb),
        ]
    return rows


def _check_same(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    """Timing two different computations would be meaningless: insist they agree first."""
    scale = max(1.0, float(np.abs(theirs).max()))  # float32 sums over ~25,000 terms
    if not np.allclose(ours, theirs, rtol=1e-4, atol=1e-5 * scale):
        raise AssertionError(f"{what}: tensorlib and the reference disagree before timing")


def run() -> list[dict]:
    """Rows for benchmarks/run.py: seconds per call of tensorlib, numpy and torch."""
    return _mlp_rows() + _conv_rows() + _imagenet_conv_rows()
