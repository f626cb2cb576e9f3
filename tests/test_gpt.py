"""Chapter 5: the GPT decoder (tensorlib.gpt.model): sizes, initialisation, causality, KV cache,
generation, and parity of its blocks with the same computation written in PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck
from tensorlib.gpt import GPT, Block, GPTConfig, KVCache, PostNormBlock


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def small(**overrides):
    settings = dict(block_size=16, vocab_size=11, n_layer=2, n_head=2, n_embd=8)
    settings.update(overrides)
    return GPTConfig(**settings)


def ids(batch, length, vocab=11, seed=0):
    return tl.tensor(np.random.default_rng(seed).integers(0, vocab, (batch, length)))


def test_block_of_width_8_with_2_heads_has_872_parameters():
    block = Block(GPTConfig(n_embd=8, n_head=2))
    by_hand = 2 * 8 + (8 * 24 + 24) + (8 * 8 + 8) + 2 * 8 + (8 * 32 + 32) + (32 * 8 + 8)
    assert by_hand == 872
    assert sum(p.numel() for p in block.parameters()) == 872


def test_tied_head_counted_once_and_untied_counted_twice():
    tied, untied = GPT(small()), GPT(small(tie_weights=False))
    assert tied.lm_head.weight is tied.transformer.wte.weight
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(untied) - count(tied) == 11 * 8
    assert "lm_head.weight" in tied.state_dict()
    assert "lm_head.weight" not in [n for n, _ in tied.named_parameters()]


def test_benchmark_workload_has_about_818k_parameters():
    model = GPT(
        GPTConfig(block_size=64, vocab_size=65, n_layer=4, n_head=4, n_embd=128, tie_weights=False)
    )
    assert sum(p.numel() for p in model.parameters()) == 818_176


def test_initialisation_scales():
    config = GPTConfig(n_layer=8, n_embd=64, n_head=4)
    model = GPT(config, generator=tl.Generator(0))
    residual = [p.numpy() for n, p in model.named_parameters() if n.endswith("c_proj.weight")]
    others = [
        p.numpy()
        for n, p in model.named_parameters()
        if n.endswith("c_fc.weight") or n.endswith("wte.weight")
    ]
    std = 0.02 / math.sqrt(2 * 8)
    assert abs(np.concatenate([r.ravel() for r in residual]).std() / std - 1) < 0.05
    assert abs(np.concatenate([o.ravel() for o in others]).std() / 0.02 - 1) < 0.05
    assert all(not p.numpy().any() for n, p in model.named_parameters() if n.endswith(".bias"))
    assert all(
        (p.numpy() == 1).all() for n, p in model.named_parameters() if n.endswith("ln_1.weight")
    )


def test_same_seed_same_model():
    a, b = GPT(small(), generator=tl.Generator(3)), GPT(small(), generator=tl.Generator(3))
    for (na, pa), (nb, pb) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert na == nb and np.array_equal(pa.numpy(), pb.numpy())


@pytest.mark.parametrize("post_norm", [False, True])
def test_future_token_invariance_is_exact(post_norm):
    model = GPT(small(post_norm=post_norm), generator=tl.Generator(0))
    x = ids(2, 12, seed=1)
    changed = x.numpy().copy()
    changed[:, 7:] = (changed[:, 7:] + 3) % 11
    a, _ = model(x)
    b, _ = model(tl.tensor(changed))
    np.testing.assert_array_equal(a.numpy()[:, :7], b.numpy()[:, :7])
    assert not np.allclose(a.numpy()[:, 7:], b.numpy()[:, 7:])


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float64, 1e-10)])
@pytest.mark.parametrize("post_norm", [False, True])
def test_kv_cache_equals_recompute_at_every_step(dtype, tol, post_norm):
    model = GPT(small(post_norm=post_norm), generator=tl.Generator(0)).to(dtype)
    x = ids(3, 16, seed=2)
    with tl.no_grad():
        cache = KVCache(model.config, 3, dtype)
        prompt, _ = model(x[:, :5], cache=cache)  # a prompt of 5, then one token at a time
        steps = [prompt.numpy()] + [
            model(x[:, t : t + 1], cache=cache)[0].numpy() for t in range(5, 16)
        ]
        cached = np.concatenate(steps, axis=1)
        for t in range(16):
            full, _ = model(x[:, : t + 1])  # recompute everything up to position t
            np.testing.assert_allclose(cached[:, t], full.numpy()[:, t], rtol=tol, atol=tol)
    assert cache.length == 16


def test_context_overflow_is_an_error():
    model = GPT(small(), generator=tl.Generator(0))
    with pytest.raises(ValueError, match="context overflow"):
        model(ids(1, 17))
    with tl.no_grad():
        cache = KVCache(model.config, 1)
        model(ids(1, 16), cache=cache)
        with pytest.raises(ValueError, match="context overflow: 16 cached"):
            model(ids(1, 1), cache=cache)
    with pytest.raises(ValueError, match="exceed block_size=16"):
        model.generate(ids(1, 10), 7)


def test_cache_refuses_graph():
    model = GPT(small(), generator=tl.Generator(0))
    with pytest.raises(RuntimeError, match="no_grad"):
        model(ids(1, 3), cache=KVCache(model.config, 1))


def test_generation_reproducible_and_cache_agnostic():
    model = GPT(small(), generator=tl.Generator(0))
    prompt = ids(2, 3, seed=5)
    a = model.generate(prompt, 10, generator=tl.Generator(1)).numpy()
    b = model.generate(prompt, 10, generator=tl.Generator(1)).numpy()
    c = model.generate(prompt, 10, generator=tl.Generator(1), use_cache=False).numpy()
    assert a.shape == (2, 13)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(a[:, :3], prompt.numpy())
    tl.manual_seed(4)
    d = model.generate(prompt, 10).numpy()
    tl.manual_seed(4)
    np.testing.assert_array_equal(d, model.generate(prompt, 10).numpy())


def test_greedy_and_top_k():
    model = GPT(small(), generator=tl.Generator(0))
    prompt = ids(1, 4, seed=6)
    greedy = model.generate(prompt, 6, temperature=0).numpy()
    with tl.no_grad():
        for t in range(4, 10):
            logits, _ = model(tl.tensor(greedy[:, :t]))
            assert greedy[0, t] == logits.numpy()[0, -1].argmax()
    top1 = model.generate(prompt, 6, top_k=1, generator=tl.Generator(3)).numpy()
    np.testing.assert_array_equal(top1, greedy)
    top3 = model.generate(prompt, 6, top_k=3, generator=tl.Generator(3)).numpy()
    with tl.no_grad():
        for t in range(4, 10):
            logits, _ = model(tl.tensor(top3[:, :t]))
            assert top3[0, t] in np.argsort(logits.numpy()[0, -1])[-3:]


def test_loss_ignores_minus_one_and_gradcheck_block():
    model = GPT(small(), generator=tl.Generator(0)).double()
    x = ids(2, 6)
    targets = x.numpy().copy()
    targets[:, :3] = -1
    logits, loss = model(x, tl.tensor(targets))
    log_probs = logits.numpy() - np.log(np.exp(logits.numpy()).sum(-1, keepdims=True))
    picked = np.take_along_axis(log_probs[:, 3:], targets[:, 3:, None], -1)
    assert abs(loss.item() + picked.mean()) < 1e-12
    block = Block(small()).double()
    h = tl.tensor(np.random.default_rng(0).standard_normal((1, 4, 8)), requires_grad=True)
    assert gradcheck(lambda h, *p: block(h), (h, *block.parameters()))


def _torch_block(torch, block, x, post_norm):
    """The block written directly in PyTorch with the same weights (a reference, not a port)."""
    F = torch.nn.functional
    p = {n: torch.tensor(v.numpy(), requires_grad=True) for n, v in block.named_parameters()}
    batch, length, width = x.shape
    heads = 2

    def attn(h):
        q, k, v = F.linear(h, p["attn.c_attn.weight"], p["attn.c_attn.bias"]).split(width, dim=2)
        q, k, v = (t.view(batch, length, heads, width // heads).transpose(1, 2) for t in (q, k, v))
        y = (
            F.scaled_dot_product_attention(q, k, v, is_causal=True)
            .transpose(1, 2)
            .reshape(batch, length, width)
        )
        return F.linear(y, p["attn.c_proj.weight"], p["attn.c_proj.bias"])

    def mlp(h):
        h = F.gelu(F.linear(h, p["mlp.c_fc.weight"], p["mlp.c_fc.bias"]), approximate="tanh")
        return F.linear(h, p["mlp.c_proj.weight"], p["mlp.c_proj.bias"])

    def ln(h, name):
        return F.layer_norm(h, (width,), p[name + ".weight"], p[name + ".bias"])

    if post_norm:
        x = ln(x + attn(x), "ln_1")
        return ln(x + mlp(x), "ln_2"), p
    x = x + attn(ln(x, "ln_1"))
    return x + mlp(ln(x, "ln_2")), p


@pytest.mark.parity
@pytest.mark.parametrize("post_norm", [False, True])
@pytest.mark.parametrize("dtype, tol", [(np.float32, 3e-5), (np.float64, 1e-11)])
def test_decoder_block_parity(torch, post_norm, dtype, tol):
    config = small()
    block = (PostNormBlock if post_norm else Block)(config, generator=tl.Generator(0)).to(dtype)
    rng = np.random.default_rng(1)
    with tl.no_grad():
        for p in block.parameters():
            p.copy_(rng.standard_normal(p.shape).astype(dtype) * 0.3)
    x = rng.standard_normal((2, 7, 8)).astype(dtype)
    g = rng.standard_normal((2, 7, 8)).astype(dtype)
    x_tl, x_t = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = block(x_tl)
    ref, params = _torch_block(torch, block, x_t, post_norm)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=tol, atol=tol)
    out.backward(tl.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(x_tl.grad.numpy(), x_t.grad.numpy(), rtol=tol, atol=tol)
    for name, p in block.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), params[name].grad.numpy(), rtol=tol, atol=tol, err_msg=name
        )


@pytest.mark.parity
def test_decoder_block_parity_with_torch_transformer_layer(torch):
    """A pre-norm block is torch.nn.TransformerEncoderLayer(norm_first=True) with a causal mask."""
    config = small()
    block = Block(config, generator=tl.Generator(0)).double()
    layer = torch.nn.TransformerEncoderLayer(
        8,
        2,
        dim_feedforward=32,
        dropout=0.0,
        activation=lambda h: torch.nn.functional.gelu(h, approximate="tanh"),
        batch_first=True,
        norm_first=True,
    ).double()
    state = {
        "self_attn.in_proj_weight": block.attn.c_attn.weight,
        "self_attn.in_proj_bias": block.attn.c_attn.bias,
        "self_attn.out_proj.weight": block.attn.c_proj.weight,
        "self_attn.out_proj.bias": block.attn.c_proj.bias,
        "linear1.weight": block.mlp.c_fc.weight,
        "linear1.bias": block.mlp.c_fc.bias,
        "linear2.weight": block.mlp.c_proj.weight,
        "linear2.bias": block.mlp.c_proj.bias,
        "norm1.weight": block.ln_1.weight,
        "norm1.bias": block.ln_1.bias,
        "norm2.weight": block.ln_2.weight,
        "norm2.bias": block.ln_2.bias,
    }
    layer.load_state_dict({k: torch.tensor(v.numpy()) for k, v in state.items()})
    x = np.random.default_rng(2).standard_normal((2, 6, 8))
    # True = not allowed, as in nn.MultiheadAttention
    mask = torch.triu(torch.ones(6, 6, dtype=torch.bool), 1)
    ref = layer(torch.tensor(x), src_mask=mask).detach().numpy()
    np.testing.assert_allclose(block(tl.tensor(x)).numpy(), ref, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("post_norm", [False, True])
def test_decoder_equals_the_modules_bit_for_bit(dtype, post_norm):
    from tensorlib.gpt.model import Decoder

    model = GPT(small(post_norm=post_norm), generator=tl.Generator(0)).to(dtype)
    x = ids(2, 12, seed=4).numpy()
    decoder = Decoder(model)
    with tl.no_grad():
        slow, fast = KVCache(model.config, 2, dtype), KVCache(model.config, 2, dtype)
        model(tl.tensor(x[:, :3]), cache=slow)
        model(tl.tensor(x[:, :3]), cache=fast)
        for t in range(3, 12):
            expected = model(tl.tensor(x[:, t : t + 1]), cache=slow)[0].numpy()[:, 0]
            got = decoder.step(x[:, t], fast)
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)
    assert fast.length == slow.length == 12
    for a, b in zip(fast.layers, slow.layers, strict=True):
        np.testing.assert_array_equal(a.keys, b.keys)
        np.testing.assert_array_equal(a.values, b.values)
    with pytest.raises(ValueError, match="context overflow"):
        with tl.no_grad():
            full = KVCache(model.config, 1, dtype)
            model(ids(1, 16), cache=full)
            decoder.step(np.array([1]), full)


def test_decoder_only_for_plain_models_without_dropout():
    from tensorlib.gpt.model import Decoder, decodes_fast

    dropped = GPT(small(dropout=0.1), generator=tl.Generator(0))
    assert not decodes_fast(dropped)
    with pytest.raises(ValueError, match="decodes_fast"):
        Decoder(dropped)
    assert decodes_fast(dropped.eval())

    class Custom(GPT):
        pass

    assert not decodes_fast(Custom(small(), generator=tl.Generator(0)))


# ----------------------------------------------------------------------------- issue 21: half
# precision, generate's arguments


def test_half_precision_logits_finite_and_close_to_float32():
    model = GPT(small(n_embd=16), generator=tl.Generator(0))
    with tl.no_grad():
        for block in model.transformer.h:
            block.attn.c_attn.weight.mul_(20.0)  # scores far past float16's e^11 = 65504
    idx = ids(2, 12)
    expected, _ = model(idx)
    model.half()
    got, _ = model(idx)
    assert got.dtype == np.float16 and np.isfinite(got.numpy()).all()
    np.testing.assert_allclose(
        got.numpy().astype(np.float32), expected.numpy(), rtol=0.05, atol=0.05
    )
    # the cache and the array decoder in float16
    tokens = model.generate(ids(1, 3), 5, temperature=0).numpy()
    assert tokens.shape == (1, 8)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((ids(1, 3), -1), {}, "max_new_tokens must be an int >= 0, got -1"),
        ((ids(1, 3), 2.0), {}, "max_new_tokens must be an int >= 0"),
        (
            (tl.zeros(1, 0, dtype=tl.int64), 3),
            {},
            "idx must hold at least one sequence of at least one token",
        ),
        ((tl.zeros(0, 3, dtype=tl.int64), 3), {}, "idx must hold at least one sequence"),
        ((ids(1, 3)[0], 3), {}, r"idx must be an integer tensor of shape \(B, T\)"),
        ((tl.zeros(1, 3), 3), {}, "idx must be an integer tensor"),
        ((ids(1, 3), 3), {"top_k": 2.5}, "top_k must be an int >= 1 or None, got 2.5"),
        ((ids(1, 3), 3), {"top_k": 0}, "top_k must be an int >= 1 or None, got 0"),
        (
            (ids(1, 3), 3),
            {"temperature": float("nan")},
            "temperature must be a finite number >= 0, got nan",
        ),
        ((ids(1, 3), 3), {"temperature": -1.0}, "temperature must be a finite number >= 0"),
    ],
)
def test_generate_refuses_bad_arguments_naming_them(args, kwargs, match):
    model = GPT(small(), generator=tl.Generator(0))
    with pytest.raises(ValueError, match=match):
        model.generate(*args, **kwargs)


def test_generate_zero_new_tokens_returns_the_prompt():
    model = GPT(small(), generator=tl.Generator(0))
    prompt = ids(2, 3)
    np.testing.assert_array_equal(model.generate(prompt, 0).numpy(), prompt.numpy())
