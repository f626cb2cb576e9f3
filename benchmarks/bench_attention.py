"""Attention: fused softmax attention fwd+bwd (B=16, H=4, head dim 32) and a GPT training step
(chapter 5).

The fused ``scaled_dot_product_attention`` against PyTorch's (CPU) and against the same
attention composed from chapter 2 ops (matmul, scale, softmax, matmul), at one and two threads;
the numpy column is the hand-written forward and backward, the floor for a numpy library. Then
one training step (forward, backward, plain SGD update) of the GPT workload: vocabulary 65,
context 64, width 128, 4 heads, 4 pre-norm blocks, tanh-GELU MLP 4x, batch 16, untied head
(818,176 parameters), against the same model written in PyTorch. float32 throughout.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np
from _timing import row, torch
from threadpoolctl import threadpool_limits

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib.gpt import GPT, GPTConfig

BATCH, HEADS, HEAD_DIM = 16, 4, 32
LENGTHS = (64, 256)
GPT_CONFIG = dict(block_size=64, vocab_size=65, n_layer=4, n_head=4, n_embd=128, tie_weights=False)
GPT_BATCH, LR = 16, 1e-3


@contextmanager
def _threads(count: int):
    """numpy's BLAS and torch both at ``count`` threads inside the block."""
    previous = torch.get_num_threads() if torch is not None else None
    with threadpool_limits(count):
        if torch is not None:
            torch.set_num_threads(count)
        try:
            yield
        finally:
            if torch is not None:
                torch.set_num_threads(previous)


def _composed(q, k, v):
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    return scores.softmax(-1) @ v


def _attention_rows(length: int, threads: int) -> list[dict]:
    rng = np.random.default_rng(0)
    shape = (BATCH, HEADS, length, HEAD_DIM)
    q_np, k_np, v_np, g_np = (rng.standard_normal(shape).astype(np.float32) for _ in range(4))
    q, k, v = (tl.tensor(a, requires_grad=True) for a in (q_np, k_np, v_np))
    g = tl.tensor(g_np)

    def fused():
        for t in (q, k, v):
            t.grad = None
        F.scaled_dot_product_attention(q, k, v).backward(g)

    def composed():
        for t in (q, k, v):
            t.grad = None
        _composed(q, k, v).backward(g)

    scale = np.float32(1 / math.sqrt(HEAD_DIM))

    def numpy_floor():
        s = np.matmul(q_np * scale, k_np.swapaxes(-1, -2))
        s -= s.max(-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(-1, keepdims=True)
        out = np.matmul(s, v_np)
        dv = np.matmul(s.swapaxes(-1, -2), g_np)
        ds = np.matmul(g_np, v_np.swapaxes(-1, -2))
        ds -= (ds * s).sum(-1, keepdims=True)
        ds *= s
        ds *= scale
        return out, np.matmul(ds, k_np), np.matmul(ds.swapaxes(-1, -2), q_np), dv

    theirs = None
    if torch is not None:
        qt, kt, vt = (torch.tensor(a, requires_grad=True) for a in (q_np, k_np, v_np))
        gt = torch.from_numpy(g_np)
        out = F.scaled_dot_product_attention(q, k, v)
        ref = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt)
        if not np.allclose(out.numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-5):
            raise AssertionError("fused attention and torch disagree before timing")

        def theirs():
            for t in (qt, kt, vt):
                t.grad = None
            torch.nn.functional.scaled_dot_product_attention(qt, kt, vt).backward(gt)

    name = (
        f"attention B{BATCH} H{HEADS} T{length} d{HEAD_DIM} fwd+bwd, {threads} "
        f"thread{'s' if threads > 1 else ''}"
    )
    with _threads(threads):
        return [
            row(f"fused {name}", fused, numpy_floor, theirs),
            row(f"composed {name}", composed, numpy_floor, theirs),
        ]


class _TorchGPT(torch.nn.Module if torch is not None else object):  # type: ignore[misc]
    """The same model in PyTorch (nanoGPT's structure), loaded from tensorlib's state_dict."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        nn = torch.nn
        self.config = config
        self.transformer = nn.ModuleDict({
            "wte": nn.Embedding(config.vocab_size, config.n_embd),
            "wpe": nn.Embedding(config.block_size, config.n_embd),
            "h": nn.ModuleList([_TorchBlock(config) for _ in range(config.n_layer)]),
            "ln_f": nn.LayerNorm(config.n_embd),
        })
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx, targets):
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(idx.shape[1]))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return torch.nn.functional.cross_entropy(
            logits.view(-1, logits.shape[-1]), targets.view(-1)
        )


class _TorchBlock(torch.nn.Module if torch is not None else object):  # type: ignore[misc]
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        nn, e = torch.nn, config.n_embd
        self.heads = config.n_head
        self.ln_1, self.ln_2 = nn.LayerNorm(e), nn.LayerNorm(e)
        self.attn = nn.ModuleDict({"c_attn": nn.Linear(e, 3 * e), "c_proj": nn.Linear(e, e)})
        self.mlp = nn.ModuleDict({"c_fc": nn.Linear(e, 4 * e), "c_proj": nn.Linear(4 * e, e)})

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn.c_proj(y.transpose(1, 2).reshape(b, t, c))
        h = torch.nn.functional.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp.c_proj(h)


def _gpt_rows() -> list[dict]:
    config = GPTConfig(**GPT_CONFIG)
    model = GPT(config, generator=tl.Generator(0))
    rng = np.random.default_rng(0)
    idx_np = rng.integers(0, config.vocab_size, (GPT_BATCH, config.block_size))
    targets_np = rng.integers(0, config.vocab_size, (GPT_BATCH, config.block_size))
    idx, targets = tl.tensor(idx_np), tl.tensor(targets_np)
    params = list(model.parameters())
    assert sum(p.numel() for p in params) == 818_176

    def ours():
        _, loss = model(idx, targets)
        loss.backward()
        with tl.no_grad():
            for p in params:
                p.sub_(p.grad, alpha=LR)
                p.grad = None

    theirs = None
    if torch is not None:
        reference = _TorchGPT(config)
        reference.load_state_dict(
            {k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()}
        )
        idx_t, targets_t = torch.from_numpy(idx_np), torch.from_numpy(targets_np)
        loss_ours = model(idx, targets)[1].item()
        loss_theirs = reference(idx_t, targets_t).item()
        if abs(loss_ours - loss_theirs) > 1e-4:
            raise AssertionError(f"GPT losses disagree before timing: {loss_ours} vs {loss_theirs}")
        optimizer = torch.optim.SGD(reference.parameters(), lr=LR)

        def theirs():
            optimizer.zero_grad(set_to_none=True)
            reference(idx_t, targets_t).backward()
            optimizer.step()

    return [
        row(
            f"GPT train step 818k params, B{GPT_BATCH} T{config.block_size} (fwd+bwd+SGD)",
            ours,
            None,
            theirs,
        )
    ]


def run() -> list[dict]:
    """Rows for benchmarks/run.py: seconds per call of tensorlib, numpy and torch."""
    rows = []
    for threads in (1, 2):
        for length in LENGTHS:
            rows += _attention_rows(length, threads)
    return rows + _gpt_rows()
