"""Chapter 8 against PyTorch: a 200-step training run gives the same loss curve, and the trained
model's safetensors file loads into an equivalent PyTorch module that gives the same logits."""

import json
import math

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.gpt.data import BatchSampler
from tensorlib.gpt.train import MODEL_FILE, TrainConfig, Trainer, param_groups

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

pytestmark = pytest.mark.parity

TEXT = tl.gpt.load_corpus()[:60_000]


class TorchBlock(nn.Module):
    """One pre-norm block, with tensorlib.gpt's (and nanoGPT's) parameter names."""

    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = nn.Module()
        self.attn.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.attn.c_proj = nn.Linear(n_embd, n_embd)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Module()
        self.mlp.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.mlp.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn.c_proj(y.transpose(1, 2).reshape(B, T, C))
        return x + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh"))


class TorchGPT(nn.Module):
    """tensorlib.gpt.GPT (pre-norm, tied head, biases) in PyTorch: the same state_dict keys and
    shapes."""

    def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd):
        super().__init__()
        self.transformer = nn.ModuleDict({
            "wte": nn.Embedding(vocab_size, n_embd),
            "wpe": nn.Embedding(block_size, n_embd),
            "h": nn.ModuleList([TorchBlock(n_embd, n_head) for _ in range(n_layer)]),
            "ln_f": nn.LayerNorm(n_embd),
        })
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied, as in tensorlib

    def forward(self, idx, targets=None):
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(idx.shape[1]))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


def torch_twin(trainer):
    c = trainer.model.config
    twin = TorchGPT(c.vocab_size, c.block_size, c.n_layer, c.n_head, c.n_embd)
    state = {k: torch.from_numpy(v.numpy().copy()) for k, v in trainer.model.state_dict().items()}
    twin.load_state_dict(state)
    return twin


def torch_run(trainer, config, dtype):
    """The PyTorch twin trained on the trainer's batches: AdamW (decay on 2-D weights), warm-up +
    cosine, clipping."""
    twin = torch_twin(trainer).to(dtype)  # the same initial weights
    decay = [p for p in twin.parameters() if p.ndim >= 2]
    rest = [p for p in twin.parameters() if p.ndim < 2]
    assert [tuple(p.shape) for p in decay] == [
        tuple(p.shape) for p in param_groups(trainer.model, 0.1)[0]["params"]
    ]
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": config.weight_decay},
            {"params": rest, "weight_decay": 0.0},
        ],
        lr=config.lr,
        betas=(config.beta1, config.beta2),
    )
    warmup = torch.optim.lr_scheduler.LinearLR(
        optimizer, 1 / config.warmup_steps, 1.0, config.warmup_steps - 1
    )
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(
        optimizer, config.max_steps - config.warmup_steps, config.min_lr
    )
    scheduler = torch.optim.lr_scheduler.SequentialLR(
        optimizer, [warmup, cosine], [config.warmup_steps]
    )
    batches = BatchSampler(
        trainer.sampler.data,
        config.batch_size,
        config.block_size,
        config.chunk_size,
        seed=config.seed + 1,
    )
    losses = []
    for _ in range(config.max_steps):
        x, y = batches.next()  # the batches the trainer's own sampler draws
        _, loss = twin(torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy()))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(twin.parameters(), config.grad_clip)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return np.array(losses)


def test_200_steps_same_loss_curve(tmp_path):
    config = TrainConfig(
        block_size=16,
        n_layer=2,
        n_head=2,
        n_embd=32,
        batch_size=8,
        max_steps=200,
        lr=3e-3,
        min_lr=3e-4,
        warmup_steps=20,
        weight_decay=0.1,
        grad_clip=1.0,
        chunk_size=512,
    )
    trainer = Trainer(config, TEXT, tmp_path)
    theirs = torch_run(trainer, config, torch.float32)
    # float32 noise: how far PyTorch's own float32 run drifts
    exact = torch_run(trainer, config, torch.float64)
    ours = np.array([trainer.train_step() for _ in range(config.max_steps)])
    assert ours[0] == pytest.approx(math.log(trainer.tokenizer.vocab_size), abs=0.05)
    assert ours[-20:].mean() < ours[0] - 1.0  # it learned
    gap, noise = np.abs(ours - theirs), np.abs(theirs - exact)
    assert gap[:20].max() < 1e-5, f"warm-up: largest loss difference {gap[:20].max():.2e}"
    # after that, rounding differences grow through training in both libraries alike
    assert gap.max() < 3 * noise.max() + 1e-4, (
        f"largest loss difference {gap.max():.2e}, float32 noise {noise.max():.2e}"
    )
    assert abs(ours[-50:].mean() - theirs[-50:].mean()) < 5e-3  # the same end of the curve


def test_bridge_safetensors_into_pytorch(tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    config = TrainConfig(
        block_size=16,
        n_layer=2,
        n_head=2,
        n_embd=32,
        batch_size=8,
        max_steps=30,
        warmup_steps=3,
        chunk_size=512,
    )
    trainer = Trainer(config, TEXT, tmp_path)
    trainer.fit(progress=False)
    from safetensors import safe_open
    with safe_open(tmp_path / MODEL_FILE, framework="pt") as f:
        metadata = f.metadata()
    shape = json.loads(metadata["config"])
    assert metadata["vocab"] == trainer.tokenizer.chars
    tensors = safetensors_torch.load_file(tmp_path / MODEL_FILE)  # the reference reader
    assert (
        "lm_head.weight" not in tensors and metadata["lm_head.weight"] == "transformer.wte.weight"
    )
    twin = TorchGPT(
        shape["vocab_size"], shape["block_size"], shape["n_layer"], shape["n_head"], shape["n_embd"]
    )
    missing, unexpected = twin.load_state_dict(tensors, strict=False)
    assert missing == ["lm_head.weight"] and unexpected == []  # the tied head, filled by the tie
    assert twin.lm_head.weight is twin.transformer.wte.weight
    idx = BatchSampler(trainer.val_data, 4, 16, 512, seed=5).next()[0]
    with tl.no_grad():
        ours = trainer.model.eval()(idx)[0].numpy()
    with torch.no_grad():
        theirs = twin(torch.from_numpy(idx.numpy()))[0].numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
