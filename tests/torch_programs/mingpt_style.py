"""A character transformer in the style of minGPT and makemore: minGPT's NewGELU with
torch.pow(x, 3.0), a causal self-attention with masked_fill, a Dataset read by a DataLoader with
worker processes (num_workers=2, pin_memory, as minGPT's Trainer loads), torch.compile on the model
(as nanoGPT's train.py does), losses logged to TensorBoard with SummaryWriter (as makemore does)
and torch.equal. Written for tensorlib's test suite; runs unchanged on PyTorch and on tensorlib.
"""
import math
import tempfile

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.tensorboard import SummaryWriter

text = "the quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. " * 6
chars = sorted(set(text))
block_size, n_embd = 16, 24


class CharDataset(Dataset):
    def __init__(self, data):
        self.data = data

    def __len__(self):
        return len(self.data) - block_size

    def __getitem__(self, idx):
        chunk = self.data[idx:idx + block_size + 1]
        return chunk[:-1], chunk[1:]


class NewGELU(nn.Module):
    def forward(self, x):
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
        return 0.5 * x * (1.0 + torch.tanh(inner))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd), NewGELU(), nn.Linear(4 * n_embd, n_embd)
        )
        mask = torch.tril(torch.ones(block_size, block_size))
        self.register_buffer("bias", mask.view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(self.ln_1(x)).split(n_embd, dim=2)
        q, k, v = (t.view(B, T, 2, C // 2).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = F.softmax(att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf")), dim=-1)
        x = x + self.c_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(len(chars), n_embd), nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.ln_f, self.head = nn.LayerNorm(n_embd), nn.Linear(n_embd, len(chars), bias=False)

    def forward(self, idx, targets=None):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


model = GPT()
with torch.no_grad():  # the same weights in any library
    for i, p in enumerate(model.parameters()):
        wave = torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.61 + i)
        p.copy_(wave.reshape(p.shape) * 0.2)
model = torch.compile(model)
data = torch.tensor([chars.index(c) for c in text], dtype=torch.long)
loader = DataLoader(CharDataset(data), batch_size=8, shuffle=False, num_workers=2, pin_memory=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
log_dir = tempfile.mkdtemp()
with SummaryWriter(log_dir) as writer:
    for step, (x, y) in enumerate(loader):
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        writer.add_scalar("Loss/train", loss.item(), step)
        if step % 10 == 0:
            print(f"step {step}: loss {loss.item():.6f}")
        if step == 40:
            break
model.eval()
with torch.no_grad():
    x = data[:block_size].view(1, -1)
    first, again = model(x)[0], model(x)[0]
    print(f"eval logits repeat exactly: {torch.equal(first, again)}, max {first.max().item():.6f}")
