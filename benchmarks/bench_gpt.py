"""GPT training steps (chapter 8's, a user-composed one, a larger one), an MLP step and generation,
at 1 and 2 threads.

Workloads (``WORKLOADS``; one step is forward, cross-entropy, backward and AdamW, float32):

- ``gpt``: chapter 8's GPT, the suite's workload: vocabulary 65, context 64, width 128, 4 heads,
  4 pre-norm blocks with a tanh-GELU 4x MLP, untied head (818,176 parameters), batch 16.
  tensorlib's step is chapter 8's ``Trainer``'s: the batch in two micro-batches computed at once,
  the second in a worker process (``MicroBatchProcesses``, the same bits at 1 and 2 threads; at
  one thread the parts run one after the other), ``tune_malloc`` on, as the command line does;
  the ``tensorlib-untuned`` column leaves glibc's defaults, the ``tensorlib-threads`` column
  computes the two parts on two threads of one process (``micro_batch_backward``), and the
  ``tensorlib-whole-batch`` column runs the plain loop (``loss.backward()`` on the whole batch).
  PyTorch's is the same model written with ``torch.nn`` and ``F.scaled_dot_product_attention``,
  its plain loop.
- ``composed``: the same GPT as a user writes it from ``nn.Linear``, ``split``, ``masked_fill``,
  ``softmax`` and ``@`` (no fused attention), the same code in tensorlib and in PyTorch.
- ``large``: chapter 8's GPT at batch 16, context 128, width 256, 4 blocks (3.2M parameters),
  its step as ``gpt``'s.
- ``mlp``: 64-256-256-10 with ReLU at batch 128.
- ``generate``: 63 new tokens after a 1-token prompt with a KV cache, per token.

The ``numpy`` column is the step in plain numpy with a hand-written backward (checked against
finite differences by tests/test_benchmarks.py) and AdamW in place, under the same ``mallopt``
settings as tensorlib's ``tune_malloc``: the floor for a numpy library. For the GPT workloads
the numpy and torch processes also time the step's matrix products alone (every product of the
forward and backward, at its shape and layout, best of several runs): the BLAS floor of the step
in each library, reported as GFLOP/s (``peak_gflops_numpy``, ``peak_gflops_torch``) next to
the step's achieved GFLOP/s (the same product FLOPs divided by the step time).

Each figure is the median step time of ``BENCH_GPT_STEPS`` timed steps (default 8, 64 for the
MLP, after 3 warm-up steps) in a fresh process whose BLAS and torch thread counts are set
before import; ``BENCH_GPT_REPEATS`` (default 3) fresh processes per cell, interleaved (every
implementation once, then again), median taken. Peak memory: the growth of the process's peak
resident set over its size after the imports (``VmHWM``), in MB, plus each worker process's peak
less the memory it shares with the process, so that shared pages count once (``_step_peak_mb``).
``BENCH_QUICK=1`` (``run.py --quick``): 2 steps, 1 process per cell, shorter floor timing.
``BENCH_GPT_WORKLOADS=gpt,large`` selects workloads. Output format: benchmarks/README.md.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent
SHAPES = {  # workload -> (vocab V, context T, width C, heads, blocks L, batch B)
    "gpt": (65, 64, 128, 4, 4, 16),
    "composed": (65, 64, 128, 4, 4, 16),
    "large": (65, 128, 256, 4, 4, 16),
}
WORKLOADS = {  # workload -> (row label, implementations timed)
    "gpt": (
        "GPT step (chapter 8)",
        [
            "tensorlib",
            "tensorlib-untuned",
            "tensorlib-threads",
            "tensorlib-whole-batch",
            "numpy",
            "torch",
        ],
    ),
    "composed": ("GPT step, user-composed", ["tensorlib", "numpy", "torch"]),
    "large": ("GPT step B16 T128 C256 L4", ["tensorlib", "numpy", "torch"]),
    "mlp": ("MLP 64-256-256-10 step", ["tensorlib", "numpy", "torch"]),
    "generate": ("GPT generate, per token", ["tensorlib", "torch"]),
}
QUICK = os.environ.get("BENCH_QUICK") == "1"
MICRO_BATCHES = 2  # chapter 8's step: the batch in two parts, at once at two threads


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb(pid: int | str = "self") -> float:
    # VmHWM, not ru_maxrss: a child started by fork and exec inherits its parent's ru_maxrss
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def _shared_mb(pid: int) -> float:
    """The resident memory process ``pid`` shares with others now (``smaps_rollup``), in MB."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return sum(int(fields[k].split()[0]) for k in ("Shared_Clean", "Shared_Dirty")) / 1024


def _step_peak_mb(step, base: float) -> float:
    """The peak memory growth of a step's processes: this one's peak resident set over ``base``,
    plus, for each worker of ``MicroBatchProcesses``, its peak resident set less what it shares
    with this process now (the pages it was forked with and has not written, the shared areas),
    which this process's figure already counts. The shared part only shrinks as a worker writes,
    so the worker's part is, if anything, too large."""
    peak = max(0.0, _peak_mb() - base)
    parts = getattr(step, "parts", None)
    for pid in [] if parts is None else parts.pids:
        peak += max(0.0, _peak_mb(pid) - _shared_mb(pid))
    return peak


def _tune_malloc_like_tensorlib() -> None:
    """glibc's mallopt with tune_malloc's defaults, for the numpy process (like with like)."""
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 * 2**20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 512 * 2**20)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):  # not glibc: nothing to tune
        pass


# --- the step's matrix products: FLOPs and the BLAS floor ---------------------------------


def products(shape: tuple[int, ...]) -> list[tuple[str, int, int, int, int, int]]:
    """Every matrix product of one GPT step: (layout, count, batch, m, k, n), 2·batch·m·k·n FLOPs
    each.

    Layouts: ``nt`` is A (m, k) times the transpose of a C-ordered (n, k) weight (Linear forward),
    ``nn`` A (m, k) times B (k, n) (Linear's input gradient), ``tn`` the transpose of a C-ordered
    (k, m) array times B (k, n) (Linear's weight gradient); ``b:`` prefixes the batched products of
    attention over batch·heads matrices (the full T x T scores, the causal half not skipped).
    """
    V, T, C, H, L, B = shape
    M, d = B * T, C // H
    out = []
    for n_in, n_out, count in ((C, 3 * C, L), (C, C, L), (C, 4 * C, L), (4 * C, C, L), (C, V, 1)):
        out += [
            ("nt", count, 1, M, n_in, n_out),
            ("nn", count, 1, M, n_out, n_in),
            ("tn", count, 1, n_out, M, n_in),
        ]
    bh = B * H
    out += [("b:nt", L, bh, T, d, T), ("b:nn", L, bh, T, T, d)]  # S = Q Kᵀ, O = P V
    # V̄, P̄, Q̄, K̄
    out += [
        ("b:tn", L, bh, T, T, d),
        ("b:nt", L, bh, T, d, T),
        ("b:nn", L, bh, T, T, d),
        ("b:tn", L, bh, T, T, d),
    ]
    return out


def step_gflop(shape: tuple[int, ...]) -> float:
    """The product FLOPs of one step, in GFLOP (elementwise work not counted)."""
    return sum(2 * count * batch * m * k * n for _, count, batch, m, k, n in products(shape)) / 1e9


def _best_seconds(fn, target: float) -> float:
    fn()
    timer = timeit.Timer(fn)
    number, elapsed = timer.autorange()
    number = max(1, int(number * target / max(elapsed, 1e-9)))
    return min(timer.repeat(repeat=3 if QUICK else 7, number=number)) / number


def blas_floor(shape: tuple[int, ...], library: str) -> float:
    """Seconds of one step's products done alone (each at its shape and layout, best of runs),
    summed."""
    import numpy as np

    rng = np.random.default_rng(0)
    total, seen = 0.0, {}
    for layout, count, batch, m, k, n in products(shape):
        key = (layout, batch, m, k, n)
        if key not in seen:
            lead = (batch,) if layout.startswith("b:") else ()
            a = rng.standard_normal(
                (*lead, k, m) if layout.endswith("tn") else (*lead, m, k), dtype=np.float32
            )
            b = rng.standard_normal(
                (*lead, n, k) if layout.endswith("nt") else (*lead, k, n), dtype=np.float32
            )
            if library == "torch":
                import torch

                a, b = torch.from_numpy(a), torch.from_numpy(b)
                swap = lambda t: t.transpose(-1, -2)  # noqa: E731
            else:
                swap = lambda t: np.swapaxes(t, -1, -2)  # noqa: E731
            left = swap(a) if layout.endswith("tn") else a
            right = swap(b) if layout.endswith("nt") else b
            seen[key] = _best_seconds(
                lambda left=left, right=right: left @ right, 0.002 if QUICK else 0.02
            )
        total += count * seen[key]
    return total


def blas_info() -> list[dict]:
    """The BLAS and OpenMP libraries loaded in this process (threadpoolctl), plus torch's MKL."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - depends on the environment
        info = []
    else:
        info = [
            {
                "owner": "torch"
                if "torch" in d["filepath"]
                else "numpy"
                if "numpy" in d["filepath"]
                else None,
                **{k: d.get(k) for k in ("internal_api", "version", "num_threads", "architecture")},
            }
            for d in threadpool_info()
        ]
    if "torch" in sys.modules:  # torch links MKL statically: threadpoolctl sees only its OpenMP
        torch = sys.modules["torch"]
        found = re.search(r"Math Kernel Library Version ([\w.-]+)", torch.__config__.show())
        blas = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
        info.append(
            {
                "owner": "torch",
                "internal_api": blas.group(1) if blas else None,
                "version": found.group(1) if found else None,
                "num_threads": torch.get_num_threads(),
                "architecture": None,
            }
        )
    return info


# --- the three GPT steps ---------------------------------------------------------------


def _torch_gpt(torch, shape):
    from torch import nn
    from torch.nn import functional as F

    V, T, C, H, L, _ = shape

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
            self.c_attn, self.c_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
            self.c_fc, self.mlp_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

        def forward(self, x, cache=None):
            B, T, C = x.shape
            q, k, v = (
                t.view(B, T, H, C // H).transpose(1, 2)
                for t in self.c_attn(self.ln_1(x)).split(C, dim=2)
            )
            if cache is not None:
                if cache:
                    k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
                cache[:] = [k, v]
            y = F.scaled_dot_product_attention(q, k, v, is_causal=q.shape[2] > 1)
            x = x + self.c_proj(y.transpose(1, 2).reshape(B, T, C))
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
            self.h = nn.ModuleList([Block() for _ in range(L)])
            self.ln_f, self.head = nn.LayerNorm(C), nn.Linear(C, V, bias=False)

        def forward(self, idx, start=0, caches=None):
            x = self.wte(idx) + self.wpe(torch.arange(start, start + idx.shape[1]))
            for i, block in enumerate(self.h):
                x = block(x, None if caches is None else caches[i])
            return self.head(self.ln_f(x))

    return GPT()


def composed_gpt(lib, shape):
    """The GPT written by a user from ``nn.Linear``, ``split``, ``masked_fill``, ``softmax`` and
    ``@``.

    ``lib`` is ``tensorlib`` or ``torch``: the same code builds the model in either library.
    """
    import numpy as np

    nn, F = lib.nn, lib.nn.functional
    V, T, C, H, L, _ = shape
    # True above the diagonal: the future
    mask = lib.tensor(np.triu(np.ones((T, T), dtype=bool), 1))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
            self.c_attn, self.c_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
            self.c_fc, self.mlp_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = (
                t.reshape(B, T, H, C // H).transpose(1, 2)
                for t in self.c_attn(self.ln_1(x)).split(C, dim=2)
            )
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // H))
            att = F.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
            x = x + self.c_proj((att @ v).transpose(1, 2).reshape(B, T, C))
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
            self.h = nn.ModuleList([Block() for _ in range(L)])
            self.ln_f, self.head = nn.LayerNorm(C), nn.Linear(C, V, bias=False)
            self.positions = lib.arange(T)

        def forward(self, idx, targets):
            x = self.wte(idx) + self.wpe(self.positions)
            for block in self.h:
                x = block(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    return GPT()


def numpy_gpt_step(rng, idx, tgt, shape, dtype=None):
    """The GPT step in plain numpy, backward written by hand, AdamW in place: the floor.

    Returns ``step()`` (one step, returns the loss); ``step.params`` and ``step.forward_backward``
    (returns ``(loss, grads)``) are there to check the hand-written gradients.
    """
    import numpy as np

    f32 = np.float32 if dtype is None else dtype
    V, T, C, H, L, B = shape

    def normal(*size, std=0.02):
        return (rng.standard_normal(size) * std).astype(f32)

    P = {
        "wte": normal(V, C),
        "wpe": normal(T, C),
        "lnf_w": np.ones(C, f32),
        "lnf_b": np.zeros(C, f32),
        "head": normal(V, C),
    }
    for i in range(L):
        P.update(
            {
                f"{i}.ln1_w": np.ones(C, f32),
                f"{i}.ln1_b": np.zeros(C, f32),
                f"{i}.ln2_w": np.ones(C, f32),
                f"{i}.ln2_b": np.zeros(C, f32),
                f"{i}.attn_w": normal(3 * C, C),
                f"{i}.attn_b": np.zeros(3 * C, f32),
                f"{i}.proj_w": normal(C, C),
                f"{i}.proj_b": np.zeros(C, f32),
                f"{i}.fc_w": normal(4 * C, C),
                f"{i}.fc_b": np.zeros(4 * C, f32),
                f"{i}.mlp_w": normal(C, 4 * C),
                f"{i}.mlp_b": np.zeros(C, f32),
            }
        )
    M = {k: np.zeros_like(v) for k, v in P.items()}
    S = {k: np.zeros_like(v) for k, v in P.items()}
    forward_backward = _numpy_forward_backward(P, idx, tgt, shape, f32)

    def step():
        loss, G = forward_backward()
        for key, param in P.items():  # AdamW, lr 1e-3, betas (0.9, 0.999), weight decay 0.01
            g, m, s = G[key], M[key], S[key]
            param *= f32(1 - 1e-5)
            m *= f32(0.9)
            m += f32(0.1) * g
            s *= f32(0.999)
            s += f32(0.001) * g * g
            param -= f32(1e-3) * m / (np.sqrt(s) + f32(1e-8))
        return loss

    step.params, step.forward_backward = P, forward_backward
    return step


def _ln_fwd(x, w, b, f32):
    import numpy as np

    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    rstd = 1 / np.sqrt((xc * xc).mean(-1, keepdims=True) + f32(1e-5))
    xh = xc * rstd
    return xh * w + b, (xh, rstd)


def _ln_bwd(g, cache, w):
    xh, rstd = cache
    gw, gb = (g * xh).sum(0), g.sum(0)
    gx = g * w
    gx = rstd * (gx - gx.mean(-1, keepdims=True) - xh * (gx * xh).mean(-1, keepdims=True))
    return gx, gw, gb


def _numpy_forward_backward(P, idx, tgt, shape, f32):
    import numpy as np

    V, T, C, H, L, B = shape
    D, n = C // H, B * T
    mask = np.triu(np.ones((T, T), bool), 1)
    c0, c1 = f32(np.sqrt(2 / np.pi)), f32(0.044715)
    flat_idx, flat_tgt = idx.reshape(-1), tgt.reshape(-1)

    def block_fwd(x, i):
        h, c_ln1 = _ln_fwd(x, P[f"{i}.ln1_w"], P[f"{i}.ln1_b"], f32)
        qkv = h @ P[f"{i}.attn_w"].T
        qkv += P[f"{i}.attn_b"]
        q, k, v = (
            qkv[:, j * C : (j + 1) * C].reshape(B, T, H, D).transpose(0, 2, 1, 3) for j in range(3)
        )
        att = q @ k.transpose(0, 1, 3, 2)
        att *= f32(1 / np.sqrt(D))
        att[..., mask] = -np.inf
        att -= att.max(-1, keepdims=True)
        np.exp(att, out=att)
        att /= att.sum(-1, keepdims=True)
        y = (att @ v).transpose(0, 2, 1, 3).reshape(n, C)
        x1 = x + y @ P[f"{i}.proj_w"].T + P[f"{i}.proj_b"]
        h2, c_ln2 = _ln_fwd(x1, P[f"{i}.ln2_w"], P[f"{i}.ln2_b"], f32)
        a = h2 @ P[f"{i}.fc_w"].T
        a += P[f"{i}.fc_b"]
        t = np.tanh(c0 * (a + c1 * a * a * a))
        g_act = f32(0.5) * a * (1 + t)
        return x1 + g_act @ P[f"{i}.mlp_w"].T + P[f"{i}.mlp_b"], (
            h,
            c_ln1,
            q,
            k,
            v,
            att,
            y,
            h2,
            c_ln2,
            a,
            t,
            g_act,
        )

    def block_bwd(gx, i, cache, G):
        h, c_ln1, q, k, v, att, y, h2, c_ln2, a, t, g_act = cache
        G[f"{i}.mlp_w"], G[f"{i}.mlp_b"] = gx.T @ g_act, gx.sum(0)
        ga = gx @ P[f"{i}.mlp_w"]
        ga *= f32(0.5) * (1 + t) + f32(0.5) * a * (1 - t * t) * c0 * (1 + 3 * c1 * a * a)
        G[f"{i}.fc_w"], G[f"{i}.fc_b"] = ga.T @ h2, ga.sum(0)
        gh2, G[f"{i}.ln2_w"], G[f"{i}.ln2_b"] = _ln_bwd(ga @ P[f"{i}.fc_w"], c_ln2, P[f"{i}.ln2_w"])
        gx1 = gx + gh2
        G[f"{i}.proj_w"], G[f"{i}.proj_b"] = gx1.T @ y, gx1.sum(0)
        gy = (gx1 @ P[f"{i}.proj_w"]).reshape(B, T, H, D).transpose(0, 2, 1, 3)
        gv = att.transpose(0, 1, 3, 2) @ gy
        gatt = gy @ v.transpose(0, 1, 3, 2)
        gs = att * (gatt - (gatt * att).sum(-1, keepdims=True))
        gs *= f32(1 / np.sqrt(D))
        gq, gk = gs @ k, gs.transpose(0, 1, 3, 2) @ q
        gqkv = np.concatenate([g.transpose(0, 2, 1, 3).reshape(n, C) for g in (gq, gk, gv)], axis=1)
        G[f"{i}.attn_w"], G[f"{i}.attn_b"] = gqkv.T @ h, gqkv.sum(0)
        gh, G[f"{i}.ln1_w"], G[f"{i}.ln1_b"] = _ln_bwd(
            gqkv @ P[f"{i}.attn_w"], c_ln1, P[f"{i}.ln1_w"]
        )
        return gx1 + gh

    def forward_backward():
        G, caches = {}, []
        x = P["wte"][flat_idx] + np.tile(P["wpe"], (B, 1))  # (n, C)
        for i in range(L):
            x, cache = block_fwd(x, i)
            caches.append(cache)
        hf, c_lnf = _ln_fwd(x, P["lnf_w"], P["lnf_b"], f32)
        logits = hf @ P["head"].T
        logits -= logits.max(-1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(-1, keepdims=True)
        loss = -np.log(p[np.arange(n), flat_tgt]).mean()
        p[np.arange(n), flat_tgt] -= 1
        p /= f32(n)  # dlogits
        G["head"] = p.T @ hf
        gx, G["lnf_w"], G["lnf_b"] = _ln_bwd(p @ P["head"], c_lnf, P["lnf_w"])
        for i in reversed(range(L)):
            gx = block_bwd(gx, i, caches[i], G)
        G["wpe"] = gx.reshape(B, T, C).sum(0)
        G["wte"] = np.zeros_like(P["wte"])
        np.add.at(G["wte"], flat_idx, gx)
        return float(loss), G

    return forward_backward


# --- one cell: a fresh process ---------------------------------------------------------


def _median_step(step, steps: int) -> float:
    for _ in range(1 if QUICK else 3):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _train_step(model_loss, opt):
    def step():
        loss = model_loss()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def _micro_batch_step(model, x, y, opt, processes=True):
    """Chapter 8's step: the batch's gradient from ``MICRO_BATCHES`` parts at once, then AdamW;
    the parts in a worker process, as the ``Trainer`` runs them, or on threads."""
    from tensorlib.gpt import MicroBatchProcesses, micro_batch_backward

    loss_fn = lambda xs, ys: model(xs, ys)[1]  # noqa: E731
    parts = MicroBatchProcesses(loss_fn, model.parameters(), MICRO_BATCHES) if processes else None

    def step():
        opt.zero_grad()
        if parts is not None:
            parts.backward(x, y)
        else:
            micro_batch_backward(loss_fn, (x, y), model.parameters(), MICRO_BATCHES)
        opt.step()

    step.parts = parts  # its workers' memory counts too
    return step


def _gpt_step(impl: str, what: str, shape, idx, tgt, rng):
    """The step of a GPT workload in one implementation."""
    V, T, C, H, L, B = shape
    if impl == "numpy":
        return numpy_gpt_step(rng, idx, tgt, shape)
    if impl.startswith("tensorlib"):
        import tensorlib as lib
        from tensorlib.gpt import GPT, GPTConfig

        x, y = lib.tensor(idx), lib.tensor(tgt)
        if what != "composed":
            model = GPT(GPTConfig(T, V, L, H, C, tie_weights=False), lib.Generator(0))
            opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
            if impl == "tensorlib-whole-batch":
                step = _train_step(lambda: model(x, y)[1], opt)
            else:
                step = _micro_batch_step(model, x, y, opt, impl != "tensorlib-threads")
            step.model = model  # for tests/test_benchmarks.py
            return step
    else:
        import torch as lib

        x, y = lib.from_numpy(idx), lib.from_numpy(tgt)
        if what != "composed":
            model = _torch_gpt(lib, shape)
            loss = lambda: lib.nn.functional.cross_entropy(  # noqa: E731
                model(x).flatten(0, 1), y.flatten()
            )
            return _train_step(loss, lib.optim.AdamW(model.parameters(), lr=1e-3))
    model = composed_gpt(lib, shape)
    return _train_step(lambda: model(x, y), lib.optim.AdamW(model.parameters(), lr=1e-3))


def _generate_step(impl: str, idx):
    V, T, C, H, L, _ = SHAPES["gpt"]
    if impl.startswith("tensorlib"):
        import tensorlib as tl
        from tensorlib.gpt import GPT, GPTConfig

        model = GPT(GPTConfig(T, V, L, H, C, tie_weights=False), tl.Generator(0)).eval()
        prompt = tl.tensor(idx[:1, :1])
        return lambda: model.generate(prompt, T - 1, temperature=0.0)
    import torch

    model = _torch_gpt(torch, SHAPES["gpt"]).eval()
    prompt = torch.from_numpy(idx[:1, :1])

    def step():
        with torch.no_grad():
            caches, tokens = [[] for _ in range(L)], prompt
            logits = model(tokens, 0, caches)
            for position in range(1, T):
                nxt = logits[:, -1].argmax(-1, keepdim=True)
                tokens = torch.cat([tokens, nxt], 1)
                logits = model(nxt, position, caches)
    return step


def _mlp_step(impl: str, rng):
    import numpy as np

    sizes, xb, yb = (
        [64, 256, 256, 10],
        rng.standard_normal((128, 64), dtype=np.float32),
        rng.integers(0, 10, 128),
    )
    if impl == "numpy":
        return _numpy_mlp_step(rng, sizes, xb, yb)
    if impl.startswith("tensorlib"):
        import tensorlib as lib

        x, y = lib.tensor(xb), lib.tensor(yb)
    else:
        import torch as lib

        x, y = lib.from_numpy(xb), lib.from_numpy(yb)
    layers = []
    for i in range(3):
        layers += [lib.nn.Linear(sizes[i], sizes[i + 1])] + ([lib.nn.ReLU()] if i < 2 else [])
    model = lib.nn.Sequential(*layers)
    return _train_step(
        lambda: lib.nn.functional.cross_entropy(model(x), y),
        lib.optim.AdamW(model.parameters(), lr=1e-3),
    )


def _numpy_mlp_step(rng, sizes, xb, yb):
    """The MLP step in numpy: manual backward, AdamW's update in place."""
    import numpy as np

    ws = [
        rng.standard_normal((sizes[i + 1], sizes[i]), dtype=np.float32)
        * np.float32(sizes[i] ** -0.5)
        for i in range(3)
    ]
    bs = [np.zeros(sizes[i + 1], np.float32) for i in range(3)]
    params = ws + bs
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    onehot = np.eye(10, dtype=np.float32)[yb]

    def step():
        acts = [xb]
        for i in range(3):
            z = acts[-1] @ ws[i].T + bs[i]
            acts.append(np.maximum(z, 0) if i < 2 else z)
        z = acts[-1]
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        g = (p - onehot) / np.float32(len(yb))
        grads_w, grads_b = [None] * 3, [None] * 3
        for i in (2, 1, 0):
            grads_w[i], grads_b[i] = g.T @ acts[i], g.sum(0)
            if i:
                g = (g @ ws[i]) * (acts[i] > 0)
        for p_, g_, m_, v_ in zip(params, grads_w + grads_b, m, v, strict=True):
            m_ *= 0.9
            m_ += 0.1 * g_
            v_ *= 0.999
            v_ += 0.001 * g_ * g_
            p_ *= np.float32(1 - 1e-3 * 1e-2)
            p_ -= np.float32(1e-3) * m_ / (np.sqrt(v_) + np.float32(1e-8))
    return step


def worker(impl: str, what: str, steps: int) -> dict:
    """Runs in a fresh process: the median step time, the peak memory growth and the BLAS of one
    cell."""
    import numpy as np

    if impl.startswith("tensorlib"):
        sys.path.insert(0, str(ROOT))
        import tensorlib  # noqa: F401
        from tensorlib.gpt import tune_malloc

        if impl != "tensorlib-untuned":
            tune_malloc()
    elif impl == "torch":
        import torch

        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    elif impl == "numpy":
        _tune_malloc_like_tensorlib()
    base = _rss_mb()
    rng = np.random.default_rng(0)
    shape = SHAPES.get(what, SHAPES["gpt"])
    idx = rng.integers(0, shape[0], (shape[5], shape[1]))
    tgt = rng.integers(0, shape[0], (shape[5], shape[1]))
    if what in SHAPES:
        step = _gpt_step(impl, what, shape, idx, tgt, rng)
    elif what == "generate":
        step = _generate_step(impl, idx)
    elif what == "mlp":
        step = _mlp_step(impl, rng)
    else:
        raise ValueError(f"no {impl} implementation of {what}")
    # the MLP step is short: more of them
    seconds = _median_step(step, steps * 8 if what == "mlp" else steps)
    peak = _step_peak_mb(step, base)
    result = {"seconds": seconds, "peak_mb": peak, "blas": blas_info()}
    if what in SHAPES and impl in ("numpy", "torch"):
        result["floor_seconds"] = blas_floor(shape, impl)
    return result


def _cell(impl: str, what: str, threads: int, steps: int) -> dict:
    env = {
        **os.environ,
        "OMP_NUM_THREADS": str(threads),
        "OPENBLAS_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
    }
    out = subprocess.run(
        [sys.executable, str(HERE), "--worker", impl, what, str(steps)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- rows and the report ---------------------------------------------------------------


def _median(samples: list[dict], key: str) -> float | None:
    values = [s[key] for s in samples if s.get(key) is not None]
    return statistics.median(values) if values else None


def _row(what: str, threads: int, samples: dict[str, list[dict]]) -> dict:
    """One row: seconds, ratios, GFLOP/s, peak memory and BLAS of one workload at one thread
    count."""
    label = WORKLOADS[what][0]
    scale = 1 / (SHAPES["gpt"][1] - 1) if what == "generate" else 1.0
    seconds = {impl: _median(got, "seconds") * scale for impl, got in samples.items()}
    tl_s, np_s, torch_s = seconds.get("tensorlib"), seconds.get("numpy"), seconds.get("torch")
    ratio = lambda a, b: None if a is None or b is None else round(a / b, 3)  # noqa: E731
    row = {
        "name": f"{label}, {threads} thread{'s' if threads > 1 else ''}",
        "workload": what,
        "threads": threads,
        "tensorlib": tl_s,
        "numpy": np_s,
        "torch": torch_s,
        "tensorlib_untuned": seconds.get("tensorlib-untuned"),
        "tensorlib_whole_batch": seconds.get("tensorlib-whole-batch"),
        "tensorlib_threads": seconds.get("tensorlib-threads"),
        "tl_over_torch": ratio(tl_s, torch_s),
        "numpy_over_torch": ratio(np_s, torch_s),
        "tl_over_numpy": ratio(tl_s, np_s),
        "samples": {impl: len(got) for impl, got in samples.items()},
    }
    row.update(
        {f"peak_mb_{impl}": round(_median(got, "peak_mb"), 1) for impl, got in samples.items()}
    )
    row["blas"] = {
        impl: got[0]["blas"] for impl, got in samples.items() if impl in ("tensorlib", "torch")
    }
    if what in SHAPES:
        gflop = step_gflop(SHAPES[what])
        row["gflop"] = round(gflop, 3)
        for impl, s in seconds.items():
            row[f"gflops_{impl}"] = round(gflop / s, 1)
        for impl in ("numpy", "torch"):
            floor = _median(samples.get(impl, []), "floor_seconds")
            row[f"floor_s_{impl}"] = floor
            row[f"peak_gflops_{impl}"] = None if floor is None else round(gflop / floor, 1)
    return row


def _selected() -> list[str]:
    chosen = os.environ.get("BENCH_GPT_WORKLOADS")
    names = list(WORKLOADS) if not chosen else [w.strip() for w in chosen.split(",") if w.strip()]
    unknown = [w for w in names if w not in WORKLOADS]
    if unknown:
        raise ValueError(
            f"BENCH_GPT_WORKLOADS: unknown workload(s) {unknown}; known: {list(WORKLOADS)}"
        )
    return names


def second_core_probe() -> float:
    """The speed-up of one 1024x1024 sgemm from 1 to 2 OpenBLAS threads right now (best of 10 each,
    alternating, in a fresh process): about 1.9 on an idle 2-core machine, about 1 when other jobs
    hold the second core, in which case every 2-thread figure measures the load, not the libraries;
    above 2.2 (impossible on 2 cores) every 1-thread run was descheduled: the machine is
    overloaded."""
    code = (
        "import time, numpy as np\nfrom threadpoolctl import threadpool_limits\n"
        "a = np.ones((1024, 1024), np.float32)\nbest = {}\n"
        "for n in (1, 2) * 10:\n    with threadpool_limits(n):\n        t = time.perf_counter(); a "
        "@ a\n"
        "        best[n] = min(best.get(n, 1e9), time.perf_counter() - t)\nprint(best[1] / best[2])"
    )
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "2",
        "OPENBLAS_NUM_THREADS": "2",
        "MKL_NUM_THREADS": "2",
    }
    try:
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
    except (subprocess.CalledProcessError, OSError):  # no threadpoolctl: no probe
        return float("nan")
    return round(float(out.stdout.strip()), 2)


def _threads() -> tuple[int, ...]:
    return tuple(int(t) for t in os.environ.get("BENCH_GPT_THREADS", "1,2").split(","))


def run() -> list[dict]:
    steps = int(os.environ.get("BENCH_GPT_STEPS", "2" if QUICK else "8"))
    repeats = int(os.environ.get("BENCH_GPT_REPEATS", "1" if QUICK else "3"))
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    rows, THREADS = [], _threads()
    probe_before = second_core_probe() if max(THREADS) > 1 else None
    for what in _selected():
        impls = [impl for impl in WORKLOADS[what][1] if have_torch or impl != "torch"]
        samples: dict[int, dict[str, list[dict]]] = {
            t: {impl: [] for impl in impls} for t in THREADS
        }
        for _ in range(repeats):  # interleaved: noise from other processes hits every column alike
            for threads in THREADS:
                for impl in impls:
                    samples[threads][impl].append(_cell(impl, what, threads, steps))
        rows += [_row(what, threads, samples[threads]) for threads in THREADS]
    probe_after = second_core_probe() if max(THREADS) > 1 else None
    for row in rows:  # the speed-up from 1 to 2 threads, per implementation
        row["second_core_probe"] = [probe_before, probe_after]
        one = next(
            (r for r in rows if r["workload"] == row["workload"] and r["threads"] == 1), None
        )
        if one is None or row["threads"] == 1:
            continue
        row["speedup_vs_1_thread"] = {
            impl: round(one[impl] / row[impl], 2)
            for impl in ("tensorlib", "numpy", "torch")
            if row.get(impl) and one.get(impl)
        }
    return rows


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _blas_line(rows: list[dict]) -> str:
    parts = []
    for row in rows:
        for impl, libs in row.get("blas", {}).items():
            for lib in libs:
                if lib["internal_api"] in ("openblas", "mkl", "blis") and lib["owner"] == (
                    "torch" if impl == "torch" else "numpy"
                ):
                    parts.append(
                        f"{'numpy (tensorlib)' if impl == 'tensorlib' else impl}: "
                        f"{lib['internal_api']} {lib['version']}, "
                        f"{lib['num_threads']} thread{'s' if lib['num_threads'] != 1 else ''}"
                    )
    return "BLAS: " + "; ".join(dict.fromkeys(parts))


def report(rows: list[dict]) -> str:
    """The module's table (the format is documented in benchmarks/README.md)."""
    header = [
        "benchmark",
        "tensorlib",
        "numpy",
        "torch",
        "tl/torch",
        "numpy/torch",
        "tl/numpy",
        "x2 threads tl/np/torch",
        "GFLOP/s tl/np/torch",
        "BLAS peak np/torch",
        "peak MB tl/np/torch",
    ]
    lines = []
    for r in rows:
        sp = r.get("speedup_vs_1_thread", {})
        gf = (
            "/".join(
                f"{r[k]:.0f}" if r.get(k) else "-"
                for k in ("gflops_tensorlib", "gflops_numpy", "gflops_torch")
            )
            if "gflop" in r
            else "-"
        )
        peak = (
            "/".join(
                f"{r[k]:.0f}" if r.get(k) else "-"
                for k in ("peak_gflops_numpy", "peak_gflops_torch")
            )
            if "gflop" in r
            else "-"
        )
        mb = "/".join(
            f"{r[k]:.0f}" if f"{k}" in r else "-"
            for k in ("peak_mb_tensorlib", "peak_mb_numpy", "peak_mb_torch")
        )
        lines.append(
            [
                r["name"],
                _fmt(r["tensorlib"]),
                _fmt(r["numpy"]),
                _fmt(r["torch"]),
                _x(r["tl_over_torch"]),
                _x(r["numpy_over_torch"]),
                _x(r["tl_over_numpy"]),
                "/".join(
                    f"{sp[k]:.2f}" if k in sp else "-" for k in ("tensorlib", "numpy", "torch")
                )
                if r["threads"] > 1
                else "",
                gf,
                peak,
                mb,
            ]
        )
    widths = [
        max(len(h), *(len(line[i]) for line in lines)) if lines else len(h)
        for i, h in enumerate(header)
    ]
    out = [
        _blas_line(rows),
        "  ".join(
            h.ljust(w) if i == 0 else h.rjust(w)
            for i, (h, w) in enumerate(zip(header, widths, strict=True))
        ),
    ]
    out.append("  ".join("-" * w for w in widths))
    out += [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in lines
    ]
    probe = next((r["second_core_probe"] for r in rows if r.get("second_core_probe")), None)
    if probe and probe[0] is not None:
        out.append(
            f"second-core probe (sgemm 1024, 1 -> 2 threads, before/after): x{probe[0]} / "
            f"x{probe[1]}"
            + (
                "  (below 1.6: the second core was busy, 2-thread figures measure the load)"
                if min(probe) < 1.6
                else "  (above 2.2: the 1-thread runs were descheduled, the machine is overloaded)"
                if max(probe) > 2.2
                else ""
            )
        )
    untuned = [
        f"{r['name']}: {_fmt(r['tensorlib_untuned'])}" for r in rows if r.get("tensorlib_untuned")
    ]
    if untuned:
        out.append("tensorlib without tune_malloc: " + "; ".join(untuned))
    for key, what in (
        ("tensorlib_whole_batch", "tensorlib, the whole batch in one pass: "),
        ("tensorlib_threads", "tensorlib, the micro-batches on threads: "),
    ):
        figures = [
            f"{r['name']}: {_fmt(r[key])}, {_x(r[key] / r['torch'])} PyTorch's"
            for r in rows
            if r.get(key) and r.get("torch")
        ]
        if figures:
            out.append(what + "; ".join(figures))
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
    else:
        print(report(run()))
