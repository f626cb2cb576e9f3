"""Chapter 5: the fused softmax attention, scaled_dot_product_attention, causal masks,
online softmax and MultiheadAttention (tensorlib.nn.functional.attention,
tensorlib.nn.modules.attention).

Non-parity tests check against definitions written here in numpy and chapter 2 ops; parity
tests (``-m parity``) compare with PyTorch on the same inputs and copied weights.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib import nn
from tensorlib.autograd import gradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def randn(*shape, seed=0, dtype=np.float64, requires_grad=False):
    return tl.tensor(
        np.random.default_rng(seed).standard_normal(shape).astype(dtype),
        requires_grad=requires_grad,
    )


def reference_attention(q, k, v, mask=None, scale=None):
    """The definition, in numpy: softmax(s Q Kᵀ + M) V with fully masked rows giving zeros."""
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = scale * q @ np.swapaxes(k, -1, -2)
    if mask is not None:
        s = s + (np.where(mask, 0, -np.inf) if mask.dtype == bool else mask)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    total = e.sum(-1, keepdims=True)
    return (e / np.where(total == 0, 1, total)) @ v


def composed_attention(q, k, v, mask=None, scale=None):
    """The same with chapter 2 ops (a graph of matmul, mul, add, softmax, matmul)."""
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ k.transpose(-2, -1)) * scale
    if mask is not None:
        s = s + mask
    return s.softmax(-1) @ v


# ----------------------------------------------------------------------------- the fused Function


@pytest.mark.parametrize("shape", [(5, 4), (3, 5, 4), (2, 3, 5, 4), (2, 1, 2, 5, 4)])
def test_forward_matches_definition_any_batch_dims(shape):
    q = randn(*shape, seed=1)
    k = randn(*shape[:-2], 7, shape[-1], seed=2)
    v = randn(*shape[:-2], 7, 3, seed=3)
    out = F.scaled_dot_product_attention(q, k, v)
    assert out.shape == (*shape[:-1], 3)
    np.testing.assert_allclose(
        out.numpy(), reference_attention(q.numpy(), k.numpy(), v.numpy()), rtol=1e-12, atol=1e-12
    )


def test_fused_matches_composition_values_and_gradients():
    q, k, v = (
        randn(2, 3, 5, 4, seed=1, requires_grad=True),
        randn(2, 3, 6, 4, seed=2, requires_grad=True),
        randn(2, 3, 6, 2, seed=3, requires_grad=True),
    )
    mask = randn(5, 6, seed=4, requires_grad=True)
    g = randn(2, 3, 5, 2, seed=5)
    grads = []
    for fn in (F.scaled_dot_product_attention, composed_attention):
        for t in (q, k, v, mask):
            t.grad = None
        out = fn(q, k, v, mask) if fn is composed_attention else fn(q, k, v, attn_mask=mask)
        out.backward(g)
        grads.append([out.numpy().copy()] + [t.grad.numpy().copy() for t in (q, k, v, mask)])
    for a, b in zip(*grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)


def test_gradcheck_fused_attention_with_float_mask_and_scale():
    q, k, v = (
        randn(2, 3, 4, seed=1, requires_grad=True),
        randn(2, 5, 4, seed=2, requires_grad=True),
        randn(2, 5, 3, seed=3, requires_grad=True),
    )
    mask = randn(3, 5, seed=4, requires_grad=True)
    assert gradcheck(
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.7),
        (q, k, v, mask),
    )


def test_gradcheck_with_bool_mask_and_broadcast_batch():
    q, k, v = (
        randn(2, 2, 3, 4, seed=1, requires_grad=True),
        randn(1, 2, 5, 4, seed=2, requires_grad=True),
        randn(2, 1, 5, 3, seed=3, requires_grad=True),
    )
    mask = tl.tensor(np.random.default_rng(4).random((3, 5)) > 0.4)
    assert gradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask), (q, k, v)
    )


def test_gradcheck_masked_softmax_function():
    from tensorlib.nn.functional.attention import MaskedSoftmax

    x = randn(3, 4, seed=1, requires_grad=True)
    assert gradcheck(lambda x: MaskedSoftmax.apply(x), (x,))


def test_gradcheck_with_dropout_fixed_mask():
    q, k, v = (
        randn(3, 4, seed=1, requires_grad=True),
        randn(5, 4, seed=2, requires_grad=True),
        randn(5, 3, seed=3, requires_grad=True),
    )
    assert gradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(
            q, k, v, dropout_p=0.3, generator=tl.Generator(7)
        ),
        (q, k, v),
    )


def test_backward_reads_are_checked():
    q, k = randn(3, 4, seed=1, requires_grad=True), randn(5, 4, seed=2, requires_grad=True)
    v = randn(5, 3, seed=3)
    out = F.scaled_dot_product_attention(q, k, v)
    v.add_(1.0)  # Q̄ and K̄ read V: refused
    with pytest.raises(RuntimeError, match="SoftmaxAttentionBackward"):
        out.sum().backward()


def test_only_value_needs_grad_allows_changing_q_and_k():
    q, k = randn(3, 4, seed=1), randn(5, 4, seed=2)
    v = randn(5, 3, seed=3, requires_grad=True)
    out = F.scaled_dot_product_attention(q, k, v)
    probs = reference_attention(q.numpy(), k.numpy(), np.eye(5))
    q.add_(1.0)
    k.add_(1.0)  # V̄ = Pᵀ Ō reads the saved P only
    out.sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), probs.T @ np.ones((3, 3)), rtol=1e-12)


# ----------------------------------------------------------------------------- SDPA semantics


def test_bool_mask_true_means_attend():
    q, k, v = randn(2, 4, seed=1), randn(3, 4, seed=2), randn(3, 2, seed=3)
    only_key_1 = tl.tensor(np.array([[False, True, False]] * 2))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=only_key_1)
    np.testing.assert_allclose(out.numpy(), np.repeat(v.numpy()[1:2], 2, axis=0), rtol=1e-12)


def test_float_mask_is_added():
    q, k, v = randn(2, 4, seed=1), randn(3, 4, seed=2), randn(3, 2, seed=3)
    bias = np.random.default_rng(5).standard_normal((2, 3))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=tl.tensor(bias))
    np.testing.assert_allclose(
        out.numpy(), reference_attention(q.numpy(), k.numpy(), v.numpy(), bias), rtol=1e-12
    )


def test_default_scale_and_explicit_scale():
    q, k, v = randn(2, 9, seed=1), randn(3, 9, seed=2), randn(3, 2, seed=3)
    default = F.scaled_dot_product_attention(q, k, v).numpy()
    explicit = F.scaled_dot_product_attention(q, k, v, scale=1 / 3).numpy()
    other = F.scaled_dot_product_attention(q, k, v, scale=0.5).numpy()
    np.testing.assert_array_equal(default, explicit)
    np.testing.assert_allclose(
        other, reference_attention(q.numpy(), k.numpy(), v.numpy(), scale=0.5), rtol=1e-12
    )


def test_is_causal_with_attn_mask_raises():
    q = randn(2, 3, 4)
    with pytest.raises(ValueError, match="either attn_mask or is_causal"):
        F.scaled_dot_product_attention(
            q, q, q, attn_mask=tl.ones(3, 3, dtype=tl.bool), is_causal=True
        )


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(dropout_p=1.0), ValueError, "dropout_p"),
    (dict(attn_mask=tl.zeros(3, 4)), TypeError, "dtype"),  # float32 mask with float64 inputs
    (dict(attn_mask=tl.zeros(2, 2, dtype=tl.float64)), ValueError, "does not broadcast"),
    (dict(attn_mask=tl.zeros(2, 3, 4, dtype=tl.float64)), ValueError, "does not broadcast"),
])
def test_bad_arguments_raise(kwargs, error, match):
    q = randn(3, 4)
    with pytest.raises(error, match=match):
        F.scaled_dot_product_attention(q, randn(4, 4), randn(4, 2), **kwargs)


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match="same feature size"):
        F.scaled_dot_product_attention(randn(3, 4), randn(5, 3), randn(5, 2))
    with pytest.raises(ValueError, match="same length"):
        F.scaled_dot_product_attention(randn(3, 4), randn(5, 4), randn(6, 2))
    with pytest.raises(TypeError, match="one dtype"):
        F.scaled_dot_product_attention(randn(3, 4), randn(5, 4, dtype=np.float32), randn(5, 2))
    with pytest.raises(ValueError, match="do not broadcast"):
        F.scaled_dot_product_attention(randn(2, 3, 4), randn(3, 5, 4), randn(3, 5, 2))


def test_fully_masked_row_gives_zeros_and_no_nan_in_gradients():
    q, k, v = (randn(4, 3, seed=i, requires_grad=True) for i in range(3))
    mask = np.tril(np.ones((4, 4), dtype=bool))
    mask[2] = False  # query 2 may attend nothing
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=tl.tensor(mask))
    np.testing.assert_array_equal(out.numpy()[2], 0)
    (out * randn(4, 3, seed=9)).sum().backward()
    for t in (q, k, v):
        assert np.isfinite(t.grad.numpy()).all()
    np.testing.assert_array_equal(q.grad.numpy()[2], 0)
    # the other rows get exactly what they get without row 2 at all
    keep = [0, 1, 3]
    q2 = tl.tensor(q.numpy()[keep], requires_grad=True)
    out2 = F.scaled_dot_product_attention(q2, k, v, attn_mask=tl.tensor(mask[keep]))
    np.testing.assert_allclose(out.numpy()[keep], out2.numpy(), rtol=1e-12)


def test_dropout_uses_generator_and_is_reproducible():
    q, k, v = randn(2, 5, 4, seed=1), randn(2, 6, 4, seed=2), randn(2, 6, 3, seed=3)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, generator=tl.Generator(3)).numpy()
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, generator=tl.Generator(3)).numpy()
    c = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, generator=tl.Generator(4)).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    keep = tl.Generator(3).bernoulli(0.5, (2, 5, 6), dtype=np.float64) / 0.5
    q_, k_, v_ = q.numpy(), k.numpy(), v.numpy()
    probs = reference_attention(q_, k_, np.broadcast_to(np.eye(6), (2, 6, 6)))
    np.testing.assert_allclose(a, (probs * keep) @ v_, rtol=1e-12)


# ----------------------------------------------------------------------------- causal masks


def test_causal_mask_alignments():
    np.testing.assert_array_equal(F.causal_mask(3, 3).numpy(), np.tril(np.ones((3, 3), dtype=bool)))
    bottom_right = F.causal_mask(2, 5).numpy()
    np.testing.assert_array_equal(bottom_right, [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    top_left = F.causal_mask(2, 5, offset=0).numpy()
    np.testing.assert_array_equal(top_left, [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0]])
    assert F.causal_mask(1, 4).numpy().all()  # one new token sees the whole cache
    with pytest.raises(ValueError, match="query_length"):
        F.causal_mask(-1, 3)


def test_is_causal_is_top_left_and_cache_mask_is_bottom_right():
    q, k, v = randn(2, 4, seed=1), randn(5, 4, seed=2), randn(5, 3, seed=3)
    causal = F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
    top_left = reference_attention(
        q.numpy(), k.numpy(), v.numpy(), np.tril(np.ones((2, 5), dtype=bool))
    )
    np.testing.assert_allclose(causal, top_left, rtol=1e-12)
    cache = F.scaled_dot_product_attention(q, k, v, attn_mask=F.causal_mask(2, 5)).numpy()
    bottom_right = reference_attention(
        q.numpy(), k.numpy(), v.numpy(), np.tril(np.ones((2, 5), dtype=bool), k=3)
    )
    np.testing.assert_allclose(cache, bottom_right, rtol=1e-12)
    assert not np.allclose(causal, cache)


def test_decoding_with_bottom_right_mask_equals_full_causal_attention():
    q, k, v = randn(6, 4, seed=1), randn(6, 4, seed=2), randn(6, 3, seed=3)
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
    for t in range(6):
        step = F.scaled_dot_product_attention(
            q[t : t + 1], k[: t + 1], v[: t + 1], attn_mask=F.causal_mask(1, t + 1)
        )
        np.testing.assert_allclose(step.numpy()[0], full[t], rtol=1e-12, atol=1e-14)


def test_future_token_invariance_is_exact():
    q, k, v = randn(2, 7, 4, seed=1), randn(2, 7, 4, seed=2), randn(2, 7, 3, seed=3)
    base = F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
    k2, v2 = k.numpy().copy(), v.numpy().copy()
    k2[:, 4:] += 10.0
    v2[:, 4:] -= 3.0
    changed = F.scaled_dot_product_attention(
        q, tl.tensor(k2), tl.tensor(v2), is_causal=True
    ).numpy()
    np.testing.assert_array_equal(base[:, :4], changed[:, :4])


# ----------------------------------------------------------------------------- online softmax


@pytest.mark.parametrize("block_size", [1, 3, 8, 64])
def test_online_softmax_equals_direct(block_size):
    q, k, v = randn(2, 5, 4, seed=1), randn(2, 11, 4, seed=2), randn(2, 11, 3, seed=3)
    mask = np.random.default_rng(4).random((5, 11)) > 0.3
    direct = F.scaled_dot_product_attention(q, k, v, attn_mask=tl.tensor(mask)).numpy()
    online = F.online_softmax_attention(q, k, v, attn_mask=mask, block_size=block_size).numpy()
    np.testing.assert_allclose(online, direct, rtol=1e-12, atol=1e-14)


def test_online_softmax_fully_masked_blocks_and_rows():
    q, k, v = randn(4, 4, seed=1), randn(12, 4, seed=2), randn(12, 3, seed=3)
    mask = np.ones((4, 12), dtype=bool)
    mask[:, :4] = False  # the whole first block is masked for every row
    mask[1] = False  # row 1 sees nothing
    mask[2, 4:8] = False  # row 2 misses the middle block
    direct = F.scaled_dot_product_attention(q, k, v, attn_mask=tl.tensor(mask)).numpy()
    online = F.online_softmax_attention(q, k, v, attn_mask=mask, block_size=4).numpy()
    assert np.isfinite(online).all()
    np.testing.assert_array_equal(online[1], 0)
    np.testing.assert_allclose(online, direct, rtol=1e-12, atol=1e-14)


def test_online_softmax_float32_and_causal():
    q, k, v = (
        randn(16, 8, seed=1, dtype=np.float32),
        randn(16, 8, seed=2, dtype=np.float32),
        randn(16, 8, seed=3, dtype=np.float32),
    )
    direct = F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
    online = F.online_softmax_attention(
        q, k, v, attn_mask=F.causal_mask(16, 16), block_size=5
    ).numpy()
    assert online.dtype == np.float32
    np.testing.assert_allclose(online, direct, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="block_size"):
        F.online_softmax_attention(q, k, v, block_size=0)


# ----------------------------------------------------------------------------- MultiheadAttention


def test_mha_parameters_layout_and_init():
    mha = nn.MultiheadAttention(8, 2, generator=tl.Generator(0))
    assert [(n, tuple(p.shape)) for n, p in mha.named_parameters()] == [
        ("in_proj_weight", (24, 8)),
        ("in_proj_bias", (24,)),
        ("out_proj.weight", (8, 8)),
        ("out_proj.bias", (8,)),
    ]
    assert not mha.in_proj_bias.numpy().any() and not mha.out_proj.bias.numpy().any()
    # xavier_uniform_ on (3E, E)
    assert np.abs(mha.in_proj_weight.numpy()).max() <= np.sqrt(6 / (8 + 24))
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiheadAttention(10, 3)


def test_mha_mask_polarity_is_opposite_of_sdpa():
    mha = nn.MultiheadAttention(4, 1, batch_first=True, dtype=tl.float64, generator=tl.Generator(0))
    x = randn(1, 3, 4, seed=1)
    # MHA: True = NOT allowed -> everyone attends key 0 only
    blocked = np.array([[False, True, True]] * 3)
    _, weights = mha(x, x, x, attn_mask=tl.tensor(blocked))
    np.testing.assert_allclose(weights.numpy()[0], [[1, 0, 0]] * 3, atol=1e-15)
    # the same bool array given to SDPA means the opposite: attend keys 1 and 2 only
    q = randn(1, 3, 4, seed=2)
    sdpa = F.scaled_dot_product_attention(q, q, q, attn_mask=tl.tensor(blocked)).numpy()
    expected = reference_attention(q.numpy(), q.numpy(), q.numpy(), blocked)  # True = attend here
    assert not np.allclose(sdpa, reference_attention(q.numpy(), q.numpy(), q.numpy(), ~blocked))
    np.testing.assert_allclose(sdpa, expected, rtol=1e-12)
    _, padded = mha(x, x, x, key_padding_mask=tl.tensor(np.array([[False, False, True]])))
    np.testing.assert_array_equal(padded.numpy()[0][:, 2], 0)


def test_mha_need_weights_paths_agree_and_shapes():
    mha = nn.MultiheadAttention(8, 2, dtype=tl.float64, generator=tl.Generator(0))
    x, y = randn(5, 3, 8, seed=1), randn(7, 3, 8, seed=2)
    out, w = mha(x, y, y)
    assert out.shape == (5, 3, 8) and w.shape == (3, 5, 7)
    np.testing.assert_allclose(w.numpy().sum(-1), 1, rtol=1e-12)
    out2, none = mha(x, y, y, need_weights=False)
    assert none is None
    np.testing.assert_allclose(out.numpy(), out2.numpy(), rtol=1e-12, atol=1e-14)
    _, per_head = mha(x, y, y, average_attn_weights=False)
    assert per_head.shape == (3, 2, 5, 7)
    unbatched, uw = mha(x[:, 0], y[:, 0], y[:, 0])
    np.testing.assert_allclose(unbatched.numpy(), out.numpy()[:, 0], rtol=1e-12)
    assert uw.shape == (5, 7)
    with pytest.raises(ValueError, match="is_causal"):
        mha(x, x, x, is_causal=True)


def test_mha_gradcheck():
    mha = nn.MultiheadAttention(4, 2, dtype=tl.float64, generator=tl.Generator(0))
    x = randn(3, 2, 4, seed=1, requires_grad=True)
    pad = tl.tensor(np.array([[False, False, True], [False, False, False]]))
    params = list(mha.parameters())
    for need in (True, False):
        assert gradcheck(
            lambda x, *p, need=need: mha(x, x, x, key_padding_mask=pad, need_weights=need)[0],
            (x, *params),
        )


# ----------------------------------------------------------------------------- parity with PyTorch


def _t(torch, array, grad=False):
    return torch.tensor(np.asarray(array), requires_grad=grad)


@pytest.mark.parity
@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("shape", [(4, 6), (3, 4, 6), (2, 3, 4, 6), (2, 2, 1, 4, 6)])
@pytest.mark.parametrize("masking", ["none", "bool", "float", "causal", "scale"])
def test_sdpa_parity(torch, dtype, tol, shape, masking):
    rng = np.random.default_rng(0)
    q = rng.standard_normal(shape).astype(dtype)
    k = rng.standard_normal((*shape[:-2], 5, shape[-1])).astype(dtype)
    v = rng.standard_normal((*shape[:-2], 5, 3)).astype(dtype)
    g = rng.standard_normal((*shape[:-1], 3)).astype(dtype)
    kwargs_tl, kwargs_torch = {}, {}
    if masking == "bool":
        mask = rng.random((shape[-2], 5)) > 0.4
        mask[:, 0] = True
        kwargs_tl["attn_mask"], kwargs_torch["attn_mask"] = tl.tensor(mask), torch.tensor(mask)
    elif masking == "float":
        mask = rng.standard_normal((shape[-2], 5)).astype(dtype)
        kwargs_tl["attn_mask"], kwargs_torch["attn_mask"] = (
            tl.tensor(mask, requires_grad=True),
            _t(torch, mask, True),
        )
    elif masking == "causal":
        kwargs_tl["is_causal"] = kwargs_torch["is_causal"] = True
    elif masking == "scale":
        kwargs_tl["scale"] = kwargs_torch["scale"] = 0.3
    ours = [tl.tensor(a, requires_grad=True) for a in (q, k, v)]
    theirs = [_t(torch, a, True) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*ours, **kwargs_tl)
    ref = torch.nn.functional.scaled_dot_product_attention(*theirs, **kwargs_torch)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=tol, atol=tol)
    out.backward(tl.tensor(g))
    ref.backward(torch.tensor(g))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    if masking == "float":
        np.testing.assert_allclose(
            kwargs_tl["attn_mask"].grad.numpy(),
            kwargs_torch["attn_mask"].grad.numpy(),
            rtol=tol,
            atol=tol,
        )


@pytest.mark.parity
def test_sdpa_fully_masked_row_parity(torch):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 4, 3)) for _ in range(3))
    mask = rng.random((4, 4)) > 0.5
    mask[1] = False
    out = F.scaled_dot_product_attention(
        *(tl.tensor(a) for a in (q, k, v)), attn_mask=tl.tensor(mask)
    )
    ref = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a) for a in (q, k, v)), attn_mask=torch.tensor(mask)
    )
    # zeros in both (torch 2.13)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)


def _copy_mha(torch, mha, **kwargs):
    ref = torch.nn.MultiheadAttention(
        mha.embed_dim,
        mha.num_heads,
        batch_first=mha.batch_first,
        bias=mha.in_proj_bias is not None,
        **kwargs,
    )
    ref = ref.double() if mha.in_proj_weight.dtype == np.float64 else ref
    ref.load_state_dict({k: torch.tensor(v.numpy()) for k, v in mha.state_dict().items()})
    return ref


@pytest.mark.parity
@pytest.mark.parametrize("dtype, tol", [(np.float32, 3e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "bool", "float", "per-head"])
@pytest.mark.parametrize("bias", [True, False])
def test_mha_parity(torch, dtype, tol, batch_first, masks, bias):
    rng = np.random.default_rng(1)
    mha = nn.MultiheadAttention(
        8, 2, batch_first=batch_first, bias=bias, dtype=dtype, generator=tl.Generator(0)
    )
    if bias:
        with tl.no_grad():
            mha.in_proj_bias.copy_(rng.standard_normal(24).astype(dtype))
    ref = _copy_mha(torch, mha)
    n, length, source = 3, 4, 5
    shape_q = (n, length, 8) if batch_first else (length, n, 8)
    shape_k = (n, source, 8) if batch_first else (source, n, 8)
    q, k, v = (
        rng.standard_normal(shape_q).astype(dtype),
        rng.standard_normal(shape_k).astype(dtype),
        rng.standard_normal(shape_k).astype(dtype),
    )
    g = rng.standard_normal(shape_q).astype(dtype)
    kw_tl, kw_torch = {}, {}
    if masks == "bool":
        pad = rng.random((n, source)) > 0.7
        pad[:, 0] = False
        attn = rng.random((length, source)) > 0.7
        # key 0 is allowed everywhere: no fully masked row (torch gives NaN there)
        attn[:, 0] = False
        kw_tl = dict(key_padding_mask=tl.tensor(pad), attn_mask=tl.tensor(attn))
        kw_torch = dict(key_padding_mask=torch.tensor(pad), attn_mask=torch.tensor(attn))
    elif masks == "float":
        pad = rng.standard_normal((n, source)).astype(dtype)
        attn = rng.standard_normal((length, source)).astype(dtype)
        kw_tl = dict(key_padding_mask=tl.tensor(pad), attn_mask=tl.tensor(attn))
        kw_torch = dict(key_padding_mask=torch.tensor(pad), attn_mask=torch.tensor(attn))
    elif masks == "per-head":
        attn = rng.standard_normal((n * 2, length, source)).astype(dtype)
        kw_tl, kw_torch = dict(attn_mask=tl.tensor(attn)), dict(attn_mask=torch.tensor(attn))
    for need_weights in (True, False):
        mha.zero_grad()
        ref.zero_grad()
        ours = [tl.tensor(a, requires_grad=True) for a in (q, k, v)]
        theirs = [_t(torch, a, True) for a in (q, k, v)]
        out, w = mha(*ours, need_weights=need_weights, **kw_tl)
        ref_out, ref_w = ref(*theirs, need_weights=need_weights, **kw_torch)
        np.testing.assert_allclose(out.numpy(), ref_out.detach().numpy(), rtol=tol, atol=tol)
        if need_weights:
            np.testing.assert_allclose(w.numpy(), ref_w.detach().numpy(), rtol=tol, atol=tol)
        out.backward(tl.tensor(g))
        ref_out.backward(torch.tensor(g))
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
        ref_params = dict(ref.named_parameters())
        for name, p in mha.named_parameters():
            np.testing.assert_allclose(
                p.grad.numpy(), ref_params[name].grad.numpy(), rtol=tol, atol=tol, err_msg=name
            )


def test_mha_fully_masked_row_gives_zeros_not_nan():
    mha = nn.MultiheadAttention(4, 2, batch_first=True, dtype=tl.float64, generator=tl.Generator(0))
    x = randn(1, 3, 4, seed=1, requires_grad=True)
    blocked = np.zeros((3, 3), dtype=bool)
    blocked[1] = True  # query 1 may attend nothing (PyTorch's MultiheadAttention gives NaN here)
    for need in (True, False):
        x.grad = None
        out, _ = mha(x, x, x, attn_mask=tl.tensor(blocked), need_weights=need)
        # zero heads, then the bias
        np.testing.assert_allclose(out.numpy()[0, 1], mha.out_proj.bias.numpy())
        out.sum().backward()
        assert np.isfinite(x.grad.numpy()).all()


def test_public_names():
    assert tl.nn.MultiheadAttention is nn.modules.MultiheadAttention
    assert F.scaled_dot_product_attention.__module__ == "tensorlib.nn.functional.attention"
    for name in ("RNN", "LSTM", "RNNCell", "LSTMCell", "init_forget_bias_"):
        assert hasattr(tl.nn, name), name


def test_enable_gqa_repeats_key_value_heads():
    q = randn(2, 6, 5, 4, seed=1, requires_grad=True)
    k, v = (
        randn(2, 2, 7, 4, seed=2, requires_grad=True),
        randn(2, 2, 7, 3, seed=3, requires_grad=True),
    )
    out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    expected = reference_attention(
        q.numpy(), np.repeat(k.numpy(), 3, axis=1), np.repeat(v.numpy(), 3, axis=1)
    )
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    assert gradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
        (q[:1, :, :2], k[:1, :, :3], v[:1, :, :3]),
    )
    with pytest.raises(ValueError, match="divide"):
        F.scaled_dot_product_attention(q, randn(2, 4, 7, 4), randn(2, 4, 7, 3), enable_gqa=True)
    with pytest.raises(ValueError, match="same length|do not broadcast"):
        F.scaled_dot_product_attention(q, k, v)  # without enable_gqa the head counts must broadcast


@pytest.mark.parity
@pytest.mark.parametrize("is_causal", [False, True])
def test_enable_gqa_parity(torch, is_causal):
    rng = np.random.default_rng(0)
    q, k, v = (
        rng.standard_normal((2, 6, 5, 4)),
        rng.standard_normal((2, 3, 5, 4)),
        rng.standard_normal((2, 3, 5, 2)),
    )
    g = rng.standard_normal((2, 6, 5, 2))
    ours = [tl.tensor(a, requires_grad=True) for a in (q, k, v)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*ours, is_causal=is_causal, enable_gqa=True)
    ref = torch.nn.functional.scaled_dot_product_attention(
        *theirs, is_causal=is_causal, enable_gqa=True
    )
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-12)
    out.backward(tl.tensor(g))
    ref.backward(torch.tensor(g))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "dtype, size, tol",
    [(np.float32, 3.0, 1e-6), (np.float32, 40.0, 1e-6), (np.float64, 300.0, 1e-12)],
)
@pytest.mark.parametrize("masked", [False, True])
def test_softmax_without_row_maxima_matches_the_shifted_one(dtype, size, tol, masked):
    # small scores (|s| < 60, float64 < 600) skip the row maxima; large ones take the shifted path:
    # both are softmax
    from tensorlib.nn.functional.attention import attention_arrays

    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)).astype(dtype) for _ in range(3))
    q *= dtype(size / 4)  # scores up to about size
    mask = np.where(rng.random((5, 5)) < 0.3, -np.inf, 0.0).astype(dtype) if masked else None
    if masked:
        mask[2] = -np.inf  # one fully masked row: zeros, not NaN
    reference = reference_attention(
        q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), mask, scale=1.0
    )
    fast = attention_arrays(q, k, v, mask, 1.0, None, bool_mask=True)[1]
    general = attention_arrays(q, k, v, mask, 1.0, None, bool_mask=False)[1]
    assert np.isfinite(fast).all()
    np.testing.assert_allclose(fast, general, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(fast, reference, rtol=tol * 100, atol=tol * 100)
    if masked:
        assert not fast[:, :, 2].any()


def test_softmax_takes_the_shifted_path_when_scores_are_large():
    from tensorlib.nn.functional.attention import attention_arrays

    # rows of scores ±100 and ±200: exp overflows unshifted
    q = np.array([[[100.0, 0.0], [-100.0, 0.0]]], dtype=np.float32)
    k = np.array([[[1.0, 0.0], [2.0, 0.0]]], dtype=np.float32)
    probs, _ = attention_arrays(q, k, k, None, 1.0, None, bool_mask=True)
    np.testing.assert_allclose(probs, [[[0.0, 1.0], [1.0, 0.0]]], atol=1e-30)
    assert np.isfinite(probs).all()


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-6), (np.float64, 1e-12)])
@pytest.mark.parametrize("length", [7, 64, 128, 129])  # from 128 on, the queries in two halves
def test_packed_causal_attention_equals_split_heads(dtype, tol, length):
    from tensorlib.nn.functional.attention import PackedCausalAttention

    batch, heads, width = 2, 3, 12
    rng = np.random.default_rng(11)
    qkv = tl.tensor(
        rng.standard_normal((batch, length, 3 * width)).astype(dtype), requires_grad=True
    )
    upstream = tl.tensor(rng.standard_normal((batch, length, width)).astype(dtype))
    q, k, v = (
        p.reshape(batch, length, heads, width // heads).transpose(1, 2)
        for p in qkv.split(width, dim=2)
    )
    general = (
        F.scaled_dot_product_attention(q, k, v, is_causal=True)
        .transpose(1, 2)
        .reshape(batch, length, width)
    )
    general.backward(upstream)
    expected_grad, qkv.grad = qkv.grad.numpy().copy(), None
    packed = PackedCausalAttention.apply(qkv, heads=heads, scale=1 / np.sqrt(width // heads))
    packed.backward(upstream)
    assert (
        packed.shape == (batch, length, width) and packed.dtype == dtype and qkv.grad.dtype == dtype
    )
    np.testing.assert_allclose(packed.numpy(), general.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(qkv.grad.numpy(), expected_grad, rtol=tol * 10, atol=tol * 10)


def test_packed_causal_attention_gradcheck_and_gpt_uses_it():
    from tensorlib.gpt import GPT, GPTConfig
    from tensorlib.nn.functional.attention import PackedCausalAttention

    qkv = randn(2, 4, 3 * 4, seed=2, requires_grad=True)
    assert gradcheck(lambda t: PackedCausalAttention.apply(t, heads=2, scale=0.7), (qkv,))
    qkv = randn(1, 129, 3 * 2, seed=3, requires_grad=True)  # two halves of queries, 64 and 65
    assert gradcheck(lambda t: PackedCausalAttention.apply(t, heads=2, scale=0.7), (qkv,))
    model = GPT(
        GPTConfig(block_size=8, vocab_size=5, n_layer=1, n_head=2, n_embd=4),
        generator=tl.Generator(0),
    )
    logits, _ = model(tl.tensor([[1, 2, 3]]))
    names, seen, stack = set(), set(), [logits.grad_fn]
    while stack:  # every node of the graph
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(type(node).__name__)
        stack.extend(t.grad_fn for t in (getattr(node, "inputs", None) or ()) if t is not None)
    assert "PackedCausalAttention" in names and "SoftmaxAttention" not in names



def test_public_kernels_compute_one_attention():
    # the GPT's block and decoder use these kernels; code writing attention of its own may too
    import tensorlib.nn.functional.attention as attention
    from tensorlib.nn.functional.attention import MaskedSoftmax, SoftmaxAttention, attention_arrays

    assert {
        "attention_arrays",
        "SoftmaxAttention",
        "MaskedSoftmax",
        "PackedCausalAttention",
    } <= set(attention.__all__)
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)) for _ in range(3))
    mask = np.where(np.tri(5, dtype=bool), 0.0, -np.inf)
    mask[1] = -np.inf  # query 1 sees nothing: zeros
    probs, out = attention_arrays(q, k, v, mask, 0.5)
    fused = SoftmaxAttention.apply(tl.tensor(q), tl.tensor(k), tl.tensor(v), mask, scale=0.5)
    np.testing.assert_array_equal(fused.numpy(), out)
    np.testing.assert_allclose(
        out, reference_attention(q, k, v, mask, scale=0.5), rtol=1e-12, atol=1e-12
    )
    weights = MaskedSoftmax.apply(
        tl.tensor(np.matmul(q * 0.5, np.swapaxes(k, -1, -2)) + mask)
    ).numpy()
    np.testing.assert_allclose(weights, probs, rtol=1e-12, atol=1e-15)
    assert not probs[..., 1, :].any() and not out[..., 1, :].any()


# ----------------------------------------------------------------------------- issue 21: half
# precision, no keys


def test_float16_attention_does_not_overflow():
    """Scores of 36 overflow e^s in float16 (max 65504 = e^11.1): the softmax must shift (PyTorch:
    3.0)."""
    q = (tl.ones(1, 4, 16) * 3).to(tl.float16)
    out = F.scaled_dot_product_attention(q, q, q)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.numpy(), np.full((1, 4, 16), 3.0, dtype=np.float16))
    causal = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    np.testing.assert_array_equal(causal.numpy(), np.full((1, 4, 16), 3.0, dtype=np.float16))


@pytest.mark.parametrize("need_weights", [True, False])
def test_float16_multihead_attention_is_finite_and_close_to_float32(need_weights):
    mha = nn.MultiheadAttention(16, 2, generator=tl.Generator(0))
    with tl.no_grad():
        mha.in_proj_weight.mul_(6.0)  # scores of order 100: far past float16's e^11
    x = tl.randn(5, 2, 16, generator=tl.Generator(1))
    expected, _ = mha(x, x, x, need_weights=need_weights)
    mha.half()
    got, _ = mha(x.to(tl.float16), x.to(tl.float16), x.to(tl.float16), need_weights=need_weights)
    assert got.dtype == np.float16 and np.isfinite(got.numpy()).all()
    np.testing.assert_allclose(
        got.numpy().astype(np.float32), expected.numpy(), rtol=0.05, atol=0.05
    )


def test_attention_with_no_keys_gives_zeros_and_zero_gradients():
    """PyTorch 2.13: query (2, 3, 4) with key and value (2, 0, 4) gives zeros (2, 3, 4); every
    gradient is zero."""
    q = tl.randn(2, 3, 4, generator=tl.Generator(0), dtype=tl.float64, requires_grad=True)
    k = tl.zeros(2, 0, 4, dtype=tl.float64, requires_grad=True)
    v = tl.zeros(2, 0, 5, dtype=tl.float64, requires_grad=True)
    out = F.scaled_dot_product_attention(q, k, v)
    assert tuple(out.shape) == (2, 3, 5)
    np.testing.assert_array_equal(out.numpy(), 0.0)
    out.sum().backward()
    np.testing.assert_array_equal(q.grad.numpy(), 0.0)
    assert tuple(k.grad.shape) == (2, 0, 4) and tuple(v.grad.shape) == (2, 0, 5)
    masked = F.scaled_dot_product_attention(q, k, v, attn_mask=tl.ones(3, 0, dtype=tl.bool))
    np.testing.assert_array_equal(masked.numpy(), 0.0)


@pytest.mark.parity
def test_float16_and_no_keys_parity(torch):
    q = np.full((1, 4, 16), 3.0, dtype=np.float16)
    ours = F.scaled_dot_product_attention(tl.tensor(q), tl.tensor(q), tl.tensor(q)).numpy()
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(_t(torch, q) for _ in range(3))
    ).numpy()
    np.testing.assert_array_equal(ours, theirs)
    q = np.random.default_rng(0).standard_normal((2, 3, 4))
    empty = np.zeros((2, 0, 4))
    tq, tk, tv = _t(torch, q, True), _t(torch, empty, True), _t(torch, empty, True)
    expected = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)
    expected.sum().backward()
    lq, lk, lv = (
        tl.tensor(q, requires_grad=True),
        tl.tensor(empty, requires_grad=True),
        tl.tensor(empty, requires_grad=True),
    )
    got = F.scaled_dot_product_attention(lq, lk, lv)
    got.sum().backward()
    np.testing.assert_array_equal(got.numpy(), expected.detach().numpy())
    np.testing.assert_array_equal(lq.grad.numpy(), tq.grad.numpy())
