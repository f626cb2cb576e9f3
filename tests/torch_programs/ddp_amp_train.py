"""A character-level transformer trained in the style of nanoGPT's train.py: the imports a
multi-GPU script makes at the top (DDP, torch.distributed, AMP), a launcher check, then a
single-process CPU run. Written for tensorlib's test suite; runs unchanged on PyTorch and on
tensorlib (python -m tensorlib.run_as_torch ddp_amp_train.py).

Weights and batches are deterministic (no random generator), so both libraries print the same
losses up to float32 rounding.
"""
import math
import os
import sys
from contextlib import nullcontext

import torch
import torch.nn as nn
from torch.distributed import destroy_process_group, init_process_group
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

# -----------------------------------------------------------------------------
# configuration, overridable as --key=value (as nanoGPT's configurator does)
max_iters = 30
eval_interval = 10
batch_size = 8
block_size = 16
n_layer, n_head, n_embd = 2, 2, 32
learning_rate, min_lr, warmup_iters = 1e-2, 1e-3, 5
weight_decay, beta1, beta2, grad_clip = 0.1, 0.9, 0.95, 1.0
device = "cpu"
dtype = "float32"
for arg in sys.argv[1:]:
    key, value = arg.removeprefix("--").split("=")
    globals()[key] = type(globals()[key])(value)
# -----------------------------------------------------------------------------

ddp = int(os.environ.get("RANK", -1)) != -1  # launched by torchrun?
if ddp:
    init_process_group(backend="nccl")
    master_process = int(os.environ["RANK"]) == 0
else:
    master_process = True
torch.manual_seed(1337)
torch.backends.cuda.matmul.allow_tf32 = True  # allow tf32 on matmul
torch.backends.cudnn.allow_tf32 = True  # allow tf32 on cudnn
device_type = "cuda" if "cuda" in device else "cpu"
ptdtype = {"float32": torch.float32, "float16": torch.float16}[dtype]
ctx = (
    nullcontext()
    if device_type == "cpu"
    else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
)

text = (
    "first citizen: before we proceed any further, hear me speak. all: speak, speak. "
    "first citizen: you are all resolved rather to die than to famish? all: resolved. resolved. "
) * 20
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]


def get_batch(split, it):
    source = train_data if split == "train" else val_data
    ix = [(it * 7919 + b * 104729) % (len(source) - block_size - 1) for b in range(batch_size)]
    x = torch.stack([source[i:i + block_size] for i in ix])
    y = torch.stack([source[i + 1:i + 1 + block_size] for i in ix])
    return x.to(device), y.to(device)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd)
        )

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(self.ln_1(x)).split(n_embd, dim=2)
        q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab_size, n_embd), nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block() for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx, targets=None):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = (
            None
            if targets is None
            else F.cross_entropy(
                logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1
            )
        )
        return logits, loss


model = GPT(len(chars))
with torch.no_grad():  # the same weights in any library: a formula, not a random generator
    for i, p in enumerate(model.parameters()):
        p.copy_(
            torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.618 + i).reshape(p.shape)
            * 0.1
        )
model.to(device)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
decay = [p for p in model.parameters() if p.dim() >= 2]
no_decay = [p for p in model.parameters() if p.dim() < 2]
optimizer = torch.optim.AdamW(
    [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
    lr=learning_rate,
    betas=(beta1, beta2),
)
if ddp:
    model = DDP(model, device_ids=[int(os.environ["LOCAL_RANK"])])
raw_model = model.module if ddp else model


@torch.no_grad()
def estimate_loss():
    model.eval()
    losses = torch.zeros(4)
    for k in range(4):
        X, Y = get_batch("val", k)
        with ctx:
            _, loss = model(X, Y)
        losses[k] = loss.item()
    model.train()
    return losses.mean().item()


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    ratio = (it - warmup_iters) / (max_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (learning_rate - min_lr)


for it in range(max_iters + 1):
    for group in optimizer.param_groups:
        group["lr"] = get_lr(it)
    if it % eval_interval == 0 and master_process:
        print(f"step {it}: val loss {estimate_loss():.6f}")
    if it == max_iters:
        break
    X, Y = get_batch("train", it)
    with ctx:
        _, loss = model(X, Y)
    scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    if master_process:
        print(f"iter {it}: loss {loss.item():.6f}")
if ddp:
    destroy_process_group()
