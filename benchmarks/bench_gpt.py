"""GPT training step (818k parameters) and MLP step, forward + backward + AdamW, at 1 and 2 threads, with peak memory.

The suite's GPT workload: vocabulary 65, context 64, width 128, 4 heads, 4 pre-norm blocks with
a tanh-GELU 4x MLP, untied head (818,176 parameters), batch 16; one step is forward, cross-entropy,
backward and AdamW. tensorlib's step is chapter 8's (``tune_malloc`` on, as the command line does;
the "untuned" row leaves glibc's defaults), PyTorch's is the same model written with
``torch.nn`` (tests/test_parity_gpt_train.py's twin, untied), and in plain numpy with a
hand-written backward (checked against float64 finite differences) and AdamW in place: the
floor for a numpy library. The MLP step is 64-256-256-10 with ReLU at batch 128, with a hand-written numpy column (manual backward, Adam's update in place).
Generation: 63 new tokens after a 1-token prompt with a KV cache, in tokens per second
(reported as seconds per token).

Each figure is the median step time of ``BENCH_GPT_STEPS`` timed steps (default 8, 64 for the
MLP, after 3 warm-up steps) in a fresh process whose BLAS and torch thread counts are set before import;
``BENCH_GPT_REPEATS`` (default 1; 3 for the figures in the book) fresh processes per cell,
interleaved, median taken. Peak memory: the growth of the process's peak resident set over its
size after the imports (``VmHWM`` of ``/proc/self/status``), in MB, in the ``peak_mb_*`` fields.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent
VOCAB, CONTEXT, WIDTH, HEADS, BLOCKS, BATCH = 65, 64, 128, 4, 4, 16


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb() -> float:
    # VmHWM, not ru_maxrss: a child started by fork and exec inherits its parent's ru_maxrss
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def _torch_gpt(torch):
    from torch import nn
    from torch.nn import functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
            self.c_attn, self.c_proj = nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, WIDTH)
            self.c_fc, self.mlp_proj = nn.Linear(WIDTH, 4 * WIDTH), nn.Linear(4 * WIDTH, WIDTH)

        def forward(self, x, cache=None):
            B, T, C = x.shape
            q, k, v = (t.view(B, T, HEADS, C // HEADS).transpose(1, 2) for t in self.c_attn(self.ln_1(x)).split(C, dim=2))
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
            self.wte, self.wpe = nn.Embedding(VOCAB, WIDTH), nn.Embedding(CONTEXT, WIDTH)
            self.h = nn.ModuleList([Block() for _ in range(BLOCKS)])
            self.ln_f, self.head = nn.LayerNorm(WIDTH), nn.Linear(WIDTH, VOCAB, bias=False)

        def forward(self, idx, start=0, caches=None):
            x = self.wte(idx) + self.wpe(torch.arange(start, start + idx.shape[1]))
            for i, block in enumerate(self.h):
                x = block(x, None if caches is None else caches[i])
            return self.head(self.ln_f(x))

    return GPT()


def _numpy_gpt_step(rng, idx, tgt, dtype=None):
    """The GPT step in plain numpy, backward written by hand, Adam(W) in place: the floor."""
    import numpy as np

    f32 = np.float32 if dtype is None else dtype
    V, T, C, H, L, B = VOCAB, CONTEXT, WIDTH, HEADS, BLOCKS, BATCH
    D = C // H

    def normal(*shape, std=0.02):
        return (rng.standard_normal(shape) * std).astype(f32)

    P = {"wte": normal(V, C), "wpe": normal(T, C), "lnf_w": np.ones(C, f32), "lnf_b": np.zeros(C, f32), "head": normal(V, C)}
    for i in range(L):
        P.update({f"{i}.ln1_w": np.ones(C, f32), f"{i}.ln1_b": np.zeros(C, f32), f"{i}.ln2_w": np.ones(C, f32), f"{i}.ln2_b": np.zeros(C, f32),
                  f"{i}.attn_w": normal(3 * C, C), f"{i}.attn_b": np.zeros(3 * C, f32), f"{i}.proj_w": normal(C, C), f"{i}.proj_b": np.zeros(C, f32),
                  f"{i}.fc_w": normal(4 * C, C), f"{i}.fc_b": np.zeros(4 * C, f32), f"{i}.mlp_w": normal(C, 4 * C), f"{i}.mlp_b": np.zeros(C, f32)})
    M = {k: np.zeros_like(v) for k, v in P.items()}
    S = {k: np.zeros_like(v) for k, v in P.items()}
    mask = np.triu(np.ones((T, T), bool), 1)
    n = B * T
    c0, c1 = f32(np.sqrt(2 / np.pi)), f32(0.044715)
    flat_idx, flat_tgt = idx.reshape(-1), tgt.reshape(-1)

    def ln_fwd(x, w, b):
        mu = x.mean(-1, keepdims=True)
        xc = x - mu
        rstd = 1 / np.sqrt((xc * xc).mean(-1, keepdims=True) + f32(1e-5))
        xh = xc * rstd
        return xh * w + b, (xh, rstd)

    def ln_bwd(g, cache, w):
        xh, rstd = cache
        gw, gb = (g * xh).sum(0), g.sum(0)
        gx = g * w
        gx = rstd * (gx - gx.mean(-1, keepdims=True) - xh * (gx * xh).mean(-1, keepdims=True))
        return gx, gw, gb

    def forward_backward():
        G = {}
        x = P["wte"][flat_idx] + np.tile(P["wpe"], (B, 1))  # (n, C)
        caches = []
        for i in range(L):
            h, c_ln1 = ln_fwd(x, P[f"{i}.ln1_w"], P[f"{i}.ln1_b"])
            qkv = h @ P[f"{i}.attn_w"].T
            qkv += P[f"{i}.attn_b"]
            q, k, v = (qkv[:, j * C:(j + 1) * C].reshape(B, T, H, D).transpose(0, 2, 1, 3) for j in range(3))
            att = q @ k.transpose(0, 1, 3, 2)
            att *= f32(1 / np.sqrt(D))
            att[..., mask] = -np.inf
            att -= att.max(-1, keepdims=True)
            np.exp(att, out=att)
            att /= att.sum(-1, keepdims=True)
            y = (att @ v).transpose(0, 2, 1, 3).reshape(n, C)
            x1 = x + y @ P[f"{i}.proj_w"].T + P[f"{i}.proj_b"]
            h2, c_ln2 = ln_fwd(x1, P[f"{i}.ln2_w"], P[f"{i}.ln2_b"])
            a = h2 @ P[f"{i}.fc_w"].T
            a += P[f"{i}.fc_b"]
            t = np.tanh(c0 * (a + c1 * a * a * a))
            g_act = f32(0.5) * a * (1 + t)
            x = x1 + g_act @ P[f"{i}.mlp_w"].T + P[f"{i}.mlp_b"]
            caches.append((h, c_ln1, q, k, v, att, y, h2, c_ln2, a, t, g_act))
        hf, c_lnf = ln_fwd(x, P["lnf_w"], P["lnf_b"])
        logits = hf @ P["head"].T
        logits -= logits.max(-1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(-1, keepdims=True)
        loss = -np.log(p[np.arange(n), flat_tgt]).mean()
        p[np.arange(n), flat_tgt] -= 1
        p /= f32(n)  # dlogits
        G["head"] = p.T @ hf
        gx, G["lnf_w"], G["lnf_b"] = ln_bwd(p @ P["head"], c_lnf, P["lnf_w"])
        for i in reversed(range(L)):
            h, c_ln1, q, k, v, att, y, h2, c_ln2, a, t, g_act = caches[i]
            G[f"{i}.mlp_w"], G[f"{i}.mlp_b"] = gx.T @ g_act, gx.sum(0)
            ga = gx @ P[f"{i}.mlp_w"]
            ga *= f32(0.5) * (1 + t) + f32(0.5) * a * (1 - t * t) * c0 * (1 + 3 * c1 * a * a)
            G[f"{i}.fc_w"], G[f"{i}.fc_b"] = ga.T @ h2, ga.sum(0)
            gh2, G[f"{i}.ln2_w"], G[f"{i}.ln2_b"] = ln_bwd(ga @ P[f"{i}.fc_w"], c_ln2, P[f"{i}.ln2_w"])
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
            gh, G[f"{i}.ln1_w"], G[f"{i}.ln1_b"] = ln_bwd(gqkv @ P[f"{i}.attn_w"], c_ln1, P[f"{i}.ln1_w"])
            gx = gx1 + gh
        G["wpe"] = gx.reshape(B, T, C).sum(0)
        G["wte"] = np.zeros_like(P["wte"])
        np.add.at(G["wte"], flat_idx, gx)
        return float(loss), G

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

    step.params, step.forward_backward = P, forward_backward  # for checking the hand-written gradients
    return step


def _median_step(step, steps: int) -> float:
    for _ in range(3):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def worker(impl: str, what: str, steps: int) -> dict:
    """Runs in a fresh process: the median step time and the peak memory growth of one cell."""
    import numpy as np

    if impl.startswith("tensorlib"):
        sys.path.insert(0, str(ROOT))
        import tensorlib as tl
        from tensorlib.gpt import GPT, GPTConfig, tune_malloc
        from tensorlib.nn import functional as F
        if impl == "tensorlib":
            tune_malloc()
    elif impl == "torch":
        import torch
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    base = _rss_mb()
    rng = np.random.default_rng(0)
    idx = rng.integers(0, VOCAB, (BATCH, CONTEXT))
    tgt = rng.integers(0, VOCAB, (BATCH, CONTEXT))
    if what == "gpt" and impl.startswith("tensorlib"):
        model = GPT(GPTConfig(CONTEXT, VOCAB, BLOCKS, HEADS, WIDTH, tie_weights=False), tl.Generator(0))
        opt = tl.optim.AdamW(model.parameters(), lr=1e-3)
        x, y = tl.tensor(idx), tl.tensor(tgt)

        def step():
            _, loss = model(x, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    elif what == "gpt" and impl == "torch":
        model = _torch_gpt(torch)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x, y = torch.from_numpy(idx), torch.from_numpy(tgt)

        def step():
            loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
    elif what == "gpt" and impl == "numpy":
        step = _numpy_gpt_step(rng, idx, tgt)
    elif what == "generate" and impl.startswith("tensorlib"):
        model = GPT(GPTConfig(CONTEXT, VOCAB, BLOCKS, HEADS, WIDTH, tie_weights=False), tl.Generator(0)).eval()
        prompt = tl.tensor(idx[:1, :1])

        def step():
            model.generate(prompt, CONTEXT - 1, temperature=0.0)
    elif what == "generate" and impl == "torch":
        model = _torch_gpt(torch).eval()
        prompt = torch.from_numpy(idx[:1, :1])

        def step():
            with torch.no_grad():
                caches, tokens = [[] for _ in range(BLOCKS)], prompt
                logits = model(tokens, 0, caches)
                for position in range(1, CONTEXT):
                    nxt = logits[:, -1].argmax(-1, keepdim=True)
                    tokens = torch.cat([tokens, nxt], 1)
                    logits = model(nxt, position, caches)
    elif what == "mlp":
        sizes, xb, yb = [64, 256, 256, 10], rng.standard_normal((128, 64), dtype=np.float32), rng.integers(0, 10, 128)
        if impl.startswith("tensorlib"):
            layers = []
            for i in range(3):
                layers += [tl.nn.Linear(sizes[i], sizes[i + 1])] + ([tl.nn.ReLU()] if i < 2 else [])
            model = tl.nn.Sequential(*layers)
            opt = tl.optim.AdamW(model.parameters(), lr=1e-3)
            x, y = tl.tensor(xb), tl.tensor(yb)

            def step():
                loss = F.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
        elif impl == "torch":
            layers = []
            for i in range(3):
                layers += [torch.nn.Linear(sizes[i], sizes[i + 1])] + ([torch.nn.ReLU()] if i < 2 else [])
            model = torch.nn.Sequential(*layers)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
            x, y = torch.from_numpy(xb), torch.from_numpy(yb)

            def step():
                loss = torch.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
        else:  # numpy, hand-written backward and Adam
            ws = [rng.standard_normal((sizes[i + 1], sizes[i]), dtype=np.float32) * np.float32(sizes[i] ** -0.5) for i in range(3)]
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
    else:
        raise ValueError(f"no {impl} implementation of {what}")
    seconds = _median_step(step, steps * 8 if what == "mlp" else steps)  # the MLP step is short: more of them
    return {"seconds": seconds, "peak_mb": max(0.0, _peak_mb() - base)}


def _cell(impl: str, what: str, threads: int, steps: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    out = subprocess.run([sys.executable, str(HERE), "--worker", impl, what, str(steps)], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


WORKLOADS = {  # what -> (row label, implementations timed)
    "gpt": ("GPT train step", ["tensorlib", "tensorlib-untuned", "numpy", "torch"]),
    "mlp": ("MLP 64-256-256-10 step", ["tensorlib", "numpy", "torch"]),
    "generate": ("GPT generate, per token", ["tensorlib", "torch"]),
}


def _row(what: str, threads: int, samples: dict[str, list[dict]]) -> dict:
    label = WORKLOADS[what][0]
    scale = 1 / (CONTEXT - 1) if what == "generate" else 1.0
    seconds = {impl: statistics.median(s["seconds"] for s in got) * scale for impl, got in samples.items()}
    peaks = {f"peak_mb_{impl}": round(statistics.median(s["peak_mb"] for s in got), 1) for impl, got in samples.items()}
    return {"name": f"{label}, {threads} thread{'s' if threads > 1 else ''}", "tensorlib": seconds.get("tensorlib"),
            "numpy": seconds.get("numpy"), "torch": seconds.get("torch"), "tensorlib_untuned": seconds.get("tensorlib-untuned"), **peaks}


def run() -> list[dict]:
    steps = int(os.environ.get("BENCH_GPT_STEPS", "8"))
    repeats = int(os.environ.get("BENCH_GPT_REPEATS", "1"))
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    rows = []
    for what, (_, impls) in WORKLOADS.items():
        impls = [impl for impl in impls if have_torch or impl != "torch"]
        for threads in (1, 2):
            samples: dict[str, list[dict]] = {impl: [] for impl in impls}
            for _ in range(repeats):  # interleaved: noise from other processes hits every column alike
                for impl in impls:
                    samples[impl].append(_cell(impl, what, threads, steps))
            rows.append(_row(what, threads, samples))
    return rows


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
    else:
        for r in run():
            print(r)
