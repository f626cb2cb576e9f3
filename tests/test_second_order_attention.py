"""Chapter 5, section 3.4: second-order gradients through attention. The recorded backward
(``backward_graph``, run by ``create_graph=True``) of ``SoftmaxAttention``, ``MaskedSoftmax`` and
``PackedCausalAttention``, and through them of ``scaled_dot_product_attention`` (masks bool and
float, ``is_causal``, ``scale``, dropout, ``enable_gqa``), ``multi_head_attention_forward`` and
``nn.MultiheadAttention`` (both paths), the Transformer layers and chapter 8's GPT.

Gradgradchecks in float64 (the recorded first derivative differentiated again, in the inputs and
in the upstream gradient, against central differences of the first-order gradient), parity with
PyTorch 2.13's double backward on its math kernel (its CPU flash kernel has no double backward),
fully masked rows (zeros to every order), Hessian-vector products of whole models against central
differences, and the first-order pass unchanged."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from _gradgrad import check_gradgrad, first_order
from _gradgrad import probe as _probe
from _gradgrad import upstream as _upstream

import tensorlib as tl
from tensorlib.nn.functional import attention
from tensorlib.nn.functional.attention import (
    MaskedSoftmax,
    PackedCausalAttention,
    SoftmaxAttention,
)

RNG = np.random.default_rng(50)
Q, K, V = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 5, 4)), RNG.standard_normal(
    (2, 5, 3)
)
Q4, K4, V4 = (RNG.standard_normal((1, 2, n, 3)) for n in (4, 6, 6))  # (batch, heads, T, d)
QG, KG, VG = (RNG.standard_normal(s) for s in ((1, 4, 3, 2), (1, 2, 5, 2), (1, 2, 5, 2)))
ALLOWED = np.array([[True, True, False, False, False], [False] * 5,  # query 1 attends nothing
                    [True, False, True, False, True]])
ADDED = RNG.standard_normal((3, 5))
ADDED_INF = ADDED.copy()
ADDED_INF[0, 1:3] = -np.inf
ADDED_INF[2] = -np.inf  # a float mask that masks query 2 fully
SCORES = RNG.standard_normal((2, 3, 5))
QKV = RNG.standard_normal((2, 5, 12))  # (B, T, 3C): C = 4, two heads of 2
E, HEADS = 4, 2
X_MHA = RNG.standard_normal((3, 2, E))  # (L, N, E)
KV_MHA = RNG.standard_normal((4, 2, E))  # (S, N, E)
W_IN, B_IN = RNG.standard_normal((3 * E, E)) * 0.5, 0.1 * RNG.standard_normal(3 * E)
W_OUT, B_OUT = RNG.standard_normal((E, E)) * 0.5, 0.1 * RNG.standard_normal(E)
PADDING = np.array([[False, False, True, True], [False, False, False, False]])  # True = ignore
BLOCKED = np.triu(np.ones((3, 4), bool), k=2)  # MultiheadAttention: True = not allowed


def _f(lib):
    return lib.nn.functional


def _sdpa(lib, *args, **kwargs):
    return _f(lib).scaled_dot_product_attention(*args, **kwargs)


def _packed(lib, qkv, heads=2, scale=0.6):
    """PackedCausalAttention in tensorlib; the same split and causal attention in PyTorch."""
    if lib is tl:
        return PackedCausalAttention.apply(qkv, heads=heads, scale=scale)
    batch, length, width = qkv.shape[0], qkv.shape[1], qkv.shape[2] // 3
    q, k, v = (part.reshape(batch, length, heads, width // heads).transpose(1, 2)
               for part in qkv.split(width, dim=2))
    out = _sdpa(lib, q, k, v, is_causal=True, scale=scale)
    return out.transpose(1, 2).reshape(batch, length, width)


def _mha(lib, x, kv, w_in, b_in, w_out, b_out, need_weights=True, masks=True):
    """multi_head_attention_forward (sequence first) with the weights as inputs."""
    out, _ = _f(lib).multi_head_attention_forward(
        x, kv, kv, E, HEADS, w_in, b_in, None, None, False, 0.0, w_out, b_out,
        training=False, need_weights=need_weights,
        key_padding_mask=lib.tensor(PADDING) if masks else None,
        attn_mask=lib.tensor(BLOCKED) if masks else None,
    )
    return out


def _masked_softmax(lib, s):
    """MaskedSoftmax (tensorlib) over scores with -inf entries but no fully masked row; PyTorch's
    softmax gives the same there."""
    masked = s + lib.tensor(np.where(ALLOWED[[0, 2, 2]], 0.0, -np.inf))
    if lib is tl:
        return MaskedSoftmax.apply(masked)
    return masked.softmax(-1)


# name -> (op on (library, *inputs), input arrays, indices of the inputs that require grad)
CASES = {
    "sdpa": (lambda L, q, k, v: _sdpa(L, q, k, v), [Q, K, V], (0, 1, 2)),
    "sdpa-scale": (lambda L, q, k, v: _sdpa(L, q, k, v, scale=0.3), [Q, K, V], (0, 1, 2)),
    "sdpa-causal": (lambda L, q, k, v: _sdpa(L, q, k, v, is_causal=True), [Q4, K4, V4],
                    (0, 1, 2)),
    "sdpa-bool-mask": (lambda L, q, k, v: _sdpa(L, q, k, v, attn_mask=L.tensor(ALLOWED)),
                       [Q, K, V], (0, 1, 2)),
    "sdpa-float-mask": (lambda L, q, k, v, m: _sdpa(L, q, k, v, attn_mask=m, scale=0.7),
                        [Q, K, V, ADDED], (0, 1, 2, 3)),
    "sdpa-float-mask-inf": (lambda L, q, k, v, m: _sdpa(L, q, k, v, attn_mask=m),
                            [Q, K, V, ADDED_INF], (0, 1, 2, 3)),
    "sdpa-query-only": (lambda L, q, k, v: _sdpa(L, q, k, v, attn_mask=L.tensor(ALLOWED)),
                        [Q, K, V], (0,)),
    "sdpa-value-only": (lambda L, q, k, v: _sdpa(L, q, k, v), [Q, K, V], (2,)),
    "sdpa-mask-only": (lambda L, q, k, v, m: _sdpa(L, q, k, v, attn_mask=m),
                       [Q, K, V, ADDED], (3,)),
    "sdpa-gqa": (lambda L, q, k, v: _sdpa(L, q, k, v, is_causal=True, enable_gqa=True),
                 [QG, KG, VG], (0, 1, 2)),
    "sdpa-broadcast": (lambda L, q, k, v: _sdpa(L, q, k, v), [Q4, K4[0, :1], V4[0, :1]],
                       (0, 1, 2)),
    "masked-softmax": (_masked_softmax, [SCORES], (0,)),
    "packed-causal": (_packed, [QKV], (0,)),
    "mha-weights": (lambda L, *a: _mha(L, *a), [X_MHA, KV_MHA, W_IN, B_IN, W_OUT, B_OUT],
                    (0, 1, 2, 3, 4, 5)),
    "mha-fused": (lambda L, *a: _mha(L, *a, need_weights=False),
                  [X_MHA, KV_MHA, W_IN, B_IN, W_OUT, B_OUT], (0, 1, 2, 3, 4, 5)),
    "mha-unmasked": (lambda L, *a: _mha(L, *a, masks=False),
                     [X_MHA, KV_MHA, W_IN, B_IN, W_OUT, B_OUT], (0, 2)),
}


def _dropout_case(L, q, k, v):
    """Dropout with a fixed mask: tensorlib's generator seeded for every call."""
    return _sdpa(L, q, k, v, attn_mask=L.tensor(ALLOWED), dropout_p=0.4,
                 generator=tl.Generator(3))


def _fully_masked_case(L, q, k, v, m):
    """Every query of the second sequence masked, by a float mask holding -inf."""
    mask = np.zeros((2, 1, 5))
    mask[1] = -np.inf
    return _sdpa(L, q, k, v, attn_mask=m + L.tensor(mask))


def _softmax_fully_masked(L, s):
    return MaskedSoftmax.apply(s + L.tensor(np.where(ALLOWED, 0.0, -np.inf)))


GRADGRAD_ONLY = {  # tensorlib alone: PyTorch draws another mask, or gives NaN
    "sdpa-dropout": (_dropout_case, [Q, K, V], (0, 1, 2)),
    "sdpa-fully-masked-sequence": (_fully_masked_case, [Q, K, V, ADDED], (0, 1, 2, 3)),
    "masked-softmax-fully-masked": (_softmax_fully_masked, [SCORES], (0,)),
    "packed-one-head": (lambda L, a: _packed(L, a, heads=1), [QKV[:, :3, :6]], (0,)),
}
ALL = {**CASES, **GRADGRAD_ONLY}


@pytest.mark.parametrize("name", list(ALL))
def test_gradgradcheck(name):
    """d/dz <g(x, u), v> for z = each input and the upstream gradient u, where g is recorded
    (create_graph=True), against central differences of the first-order gradient."""
    check_gradgrad(ALL[name], first_rtol=1e-11, first_atol=1e-13)


@pytest.mark.parametrize("name", ["sdpa-float-mask", "sdpa-causal", "packed-causal",
                                  "mha-weights", "sdpa-dropout"])
def test_tensorlib_gradgradcheck(name):
    """The library's own ``gradgradcheck`` (grad_outputs drawn from a seeded generator)."""
    op, arrays, wrt = ALL[name]
    tl.manual_seed(0)
    ins = [tl.tensor(a, requires_grad=k in wrt) for k, a in enumerate(arrays)]
    assert tl.autograd.gradgradcheck(lambda *xs: op(tl, *xs), ins)


def _math_kernel(lib):
    """PyTorch's math kernel for attention: its CPU flash kernel has no double backward."""
    if lib is tl:
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel(SDPBackend.MATH)


def _second_derivatives(lib, name):
    """The recorded first derivatives and the gradients of ``sum(probe * first)`` in every input
    that requires grad and in the upstream gradient: the double backward, in ``lib``."""
    op, arrays, wrt = ALL[name]
    ins = [lib.tensor(a, requires_grad=k in wrt) for k, a in enumerate(arrays)]
    xs = [ins[k] for k in wrt]
    with _math_kernel(lib):
        out = op(lib, *ins)
    u = lib.tensor(_upstream(tuple(out.shape)), requires_grad=True)
    grads = lib.autograd.grad(out, xs, grad_outputs=u, create_graph=True)
    total = sum((g * lib.tensor(_probe(tuple(g.shape)))).sum() for g in grads)
    seconds = lib.autograd.grad(total, [*xs, u], allow_unused=True)
    return [g.detach().numpy() for g in grads] + [
        np.zeros(x.shape) if s is None else s.numpy()
        for s, x in zip(seconds, [*xs, u], strict=True)
    ]


@pytest.mark.parity
@pytest.mark.parametrize("name", list(CASES))
def test_double_backward_matches_pytorch(name):
    pytest.importorskip("torch")
    import torch

    ours, theirs = _second_derivatives(tl, name), _second_derivatives(torch, name)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parity
def test_fully_masked_rows_match_pytorch_sdpa_to_second_order():
    """PyTorch's SDPA (2.13) gives zeros for a fully masked row, and zero derivatives of every
    order there; so does ours, for a bool mask and for a float mask of -inf."""
    pytest.importorskip("torch")
    import torch

    for name in ("sdpa-bool-mask", "sdpa-float-mask-inf"):
        ours, theirs = _second_derivatives(tl, name), _second_derivatives(torch, name)
        row, wrt = (1, 3) if name == "sdpa-bool-mask" else (2, 4)
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
            assert np.isfinite(a).all()
        for derivative in (ours[0], ours[wrt]):  # Q̄ and d<Q̄, probe>/dQ: zero in the masked row
            assert not derivative[:, row].any()


@pytest.mark.parity
def test_dropout_double_backward_matches_pytorch_with_the_same_mask():
    """The recorded backward reuses the forward's dropout multiplier D: PyTorch's double
    backward of (softmax(scale Q Kᵀ + M) ⊙ D) V, with our D, gives the same numbers."""
    pytest.importorskip("torch")
    import torch

    keep = attention._dropout_keep(0.4, (2, 3, 5), np.dtype(np.float64), tl.Generator(3))
    mask = np.where(ALLOWED, 0.0, -np.inf)

    rows = torch.tensor(ALLOWED.any(-1, keepdims=True))  # query 1 attends nothing: P = 0

    def composed(q, k, v):
        scores = q @ k.transpose(-2, -1) * 0.5 + torch.tensor(mask)
        probs = torch.where(rows, scores, 0.0).softmax(-1) * rows
        return (probs * torch.tensor(keep)) @ v

    ours = _second_derivatives(tl, "sdpa-dropout")
    ins = [torch.tensor(a, requires_grad=True) for a in (Q, K, V)]
    out = composed(*ins)
    u = torch.tensor(_upstream(tuple(out.shape)), requires_grad=True)
    grads = torch.autograd.grad(out, ins, grad_outputs=u, create_graph=True)
    total = sum((g * torch.tensor(_probe(tuple(g.shape)))).sum() for g in grads)
    seconds = torch.autograd.grad(total, [*ins, u])
    theirs = [g.detach().numpy() for g in grads] + [s.numpy() for s in seconds]
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def _copy_mha(torch, mha):
    ref = torch.nn.MultiheadAttention(mha.embed_dim, mha.num_heads, batch_first=mha.batch_first)
    ref = ref.double()
    ref.load_state_dict({k: torch.tensor(v.numpy()) for k, v in mha.state_dict().items()})
    return ref


def _penalised_mha(lib, module, x, need_weights):
    """A gradient penalty through the module: out·w + |∂(out·w)/∂x|², backpropagated into the
    weights and the input."""
    weights = lib.tensor(_upstream((3, 2, E)))
    with _math_kernel(lib):
        out, _ = module(x, x, x, need_weights=need_weights, attn_mask=lib.tensor(BLOCKED[:, :3]))
        value = (out * weights).sum()
    (slope,) = lib.autograd.grad(value, x, create_graph=True)
    (value + (slope * slope).sum()).backward()
    return [x.grad.numpy()] + [p.grad.numpy() for p in module.parameters()]


@pytest.mark.parity
@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_gradient_penalty_matches_pytorch(need_weights):
    pytest.importorskip("torch")
    import torch

    mha = tl.nn.MultiheadAttention(E, HEADS, dtype=tl.float64, generator=tl.Generator(5))
    ref = _copy_mha(torch, mha)
    ours = _penalised_mha(tl, mha, tl.tensor(X_MHA, requires_grad=True), need_weights)
    theirs = _penalised_mha(torch, ref, torch.tensor(X_MHA, requires_grad=True), need_weights)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def _hvp_against_central(loss_of, params, seed, rtol=1e-6):
    """Hv by a recorded backward (create_graph=True) against central differences of the
    first-order gradient along v, for the float64 Tensors ``params`` of ``loss_of()``."""
    rng = np.random.default_rng(seed)
    direction = [rng.standard_normal(tuple(p.shape)) for p in params]
    grads = tl.autograd.grad(loss_of(), params, create_graph=True)
    pairing = sum((g * tl.tensor(d)).sum() for g, d in zip(grads, direction, strict=True))
    hvp = tl.autograd.grad(pairing, params)
    start = [p.detach().numpy().copy() for p in params]

    def grads_at(step):
        with tl.no_grad():
            for p, s, d in zip(params, start, direction, strict=True):
                p.copy_(tl.tensor(s + step * d))
        return [g.numpy() for g in tl.autograd.grad(loss_of(), params)]

    # a small step: over every parameter at once, the curvature is large (error ~ step²)
    plus, minus = grads_at(1e-6), grads_at(-1e-6)
    grads_at(0.0)
    for h, a, b in zip(hvp, plus, minus, strict=True):
        np.testing.assert_allclose(h.numpy(), (a - b) / 2e-6, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_gpt_hessian_vector_product_matches_central_differences(dropout):
    """Chapter 8's GPT forward (PackedCausalAttention without dropout, the SDPA path with it),
    fused cross-entropy and all, differentiated twice."""
    from tensorlib.gpt.model import GPT, GPTConfig

    config = GPTConfig(vocab_size=7, block_size=6, n_layer=2, n_embd=8, n_head=2,
                       dropout=dropout)
    model = GPT(config, generator=tl.Generator(1)).double()
    idx = tl.tensor(np.array([[1, 2, 3, 4, 5], [6, 5, 4, 3, 2]]))
    params = list(model.parameters())

    def loss_of():
        for module in model.modules():  # the same dropout masks at every call
            if hasattr(module, "generator") and module.generator is not None:
                module.generator.manual_seed(4)
        return model(idx, idx)[1]

    _hvp_against_central(loss_of, params, seed=2)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_hessian_vector_product(norm_first):
    layer = tl.nn.TransformerEncoderLayer(E, HEADS, dim_feedforward=8, dropout=0.0,
                                          norm_first=norm_first, dtype=tl.float64)
    x = tl.tensor(X_MHA, requires_grad=True)
    causal = tl.tensor(np.triu(np.ones((3, 3), bool), k=1))
    weights = tl.tensor(_upstream((3, 2, E)))
    params = [x, *layer.parameters()]
    _hvp_against_central(lambda: (layer(x, src_mask=causal) * weights).sum() ** 2, params,
                         seed=3)


def test_transformer_decoder_layer_runs_a_gradient_penalty():
    layer = tl.nn.TransformerDecoderLayer(E, HEADS, dim_feedforward=8, dropout=0.1,
                                          dtype=tl.float64)
    x, memory = tl.tensor(X_MHA, requires_grad=True), tl.tensor(KV_MHA)
    value = (layer(x, memory) * tl.tensor(_upstream((3, 2, E)))).sum()
    (slope,) = tl.autograd.grad(value, x, create_graph=True)
    (value + (slope * slope).sum()).backward()
    assert all(np.isfinite(p.grad.numpy()).all() for p in layer.parameters())


def test_the_attention_ops_are_listed_as_differentiable():
    listed = tl.engine.higher_order.differentiable_ops()
    for op in (SoftmaxAttention, MaskedSoftmax, PackedCausalAttention):
        assert op.__name__ in listed


@pytest.mark.parametrize("name", ["sdpa-float-mask", "sdpa-dropout", "packed-causal",
                                  "mha-weights"])
def test_the_first_order_pass_never_calls_backward_graph(name, monkeypatch):
    op, arrays, wrt = ALL[name]
    ins = [tl.tensor(a, requires_grad=k in wrt) for k, a in enumerate(arrays)]
    out = op(tl, *ins)
    u = _upstream(tuple(out.shape))
    out.backward(tl.tensor(u), retain_graph=True)
    first = [ins[k].grad.numpy().copy() for k in wrt]

    def refuse(self, grad):
        raise AssertionError(f"{type(self).__name__}.backward_graph ran in a first-order pass")

    for cls in (SoftmaxAttention, MaskedSoftmax, PackedCausalAttention):
        monkeypatch.setattr(cls, "backward_graph", refuse)
    with pytest.raises(AssertionError, match="backward_graph ran"):
        tl.autograd.grad(out, [ins[k] for k in wrt], grad_outputs=tl.tensor(u), create_graph=True)
    for k in wrt:
        ins[k].grad = None
    out.backward(tl.tensor(u))
    for k, expected in zip(wrt, first, strict=True):
        assert np.array_equal(ins[k].grad.numpy(), expected)


@pytest.mark.parametrize("name", ["sdpa-float-mask", "packed-causal", "masked-softmax"])
def test_the_recorded_gradient_is_the_first_order_one(name):
    op, arrays, wrt = ALL[name]
    ins = [tl.tensor(a, requires_grad=k in wrt) for k, a in enumerate(arrays)]
    out = op(tl, *ins)
    u = _upstream(tuple(out.shape))
    recorded = tl.autograd.grad(out, [ins[k] for k in wrt], grad_outputs=tl.tensor(u),
                                create_graph=True)
    assert all(g.grad_fn is not None for g in recorded)
    for g, plain in zip(recorded, first_order(ALL[name], arrays, u), strict=True):
        np.testing.assert_allclose(g.detach().numpy(), plain, rtol=1e-12, atol=1e-14)


def test_float32_stays_float32():
    results = {}
    for dtype in (np.float32, np.float64):
        q, k, v = (tl.tensor(a.astype(dtype), requires_grad=True) for a in (Q4, K4, V4))
        qkv = tl.tensor(QKV.astype(dtype), requires_grad=True)
        out = _sdpa(tl, q, k, v, is_causal=True).sum() + (_packed(tl, qkv) ** 2).sum()
        grads = tl.autograd.grad(out, [q, k, v, qkv], create_graph=True)
        seconds = tl.autograd.grad(sum((g * g).sum() for g in grads), [q, k, v, qkv])
        results[dtype] = [*grads, *seconds]
    assert all(g.dtype == tl.float32 for g in results[np.float32])
    for a, b in zip(results[np.float32], results[np.float64], strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-3, atol=1e-4)


def test_no_keys_gives_zero_derivatives():
    q = tl.tensor(Q, requires_grad=True)
    k, v = tl.tensor(np.zeros((2, 0, 4)), requires_grad=True), tl.tensor(np.zeros((2, 0, 3)))
    out = _sdpa(tl, q, k, v)
    (grad_q,) = tl.autograd.grad((out * tl.tensor(_upstream((2, 3, 3)))).sum(), q,
                                 create_graph=True)
    assert not grad_q.detach().numpy().any()
    (second,) = tl.autograd.grad((grad_q * grad_q).sum(), q, allow_unused=True)
    assert second is None or not second.numpy().any()


def test_an_input_changed_in_place_is_refused_where_the_recorded_backward_reads_it():
    q = tl.tensor(Q, requires_grad=True)
    h = q * 1.0
    out = _sdpa(tl, h, tl.tensor(K), tl.tensor(V))
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*SoftmaxAttention"):
        tl.autograd.grad(out.sum(), q, create_graph=True)
