"""Chapters 4 and 5: what real PyTorch programs (timm, dcgan, CLIP, vit-pytorch) ask of the layers:
``inplace`` flags, implicit softmax dims, ``reset_parameters()`` overrides, positional
``device``/``dtype``, ``Embedding(max_norm=...)``, ``SyncBatchNorm``, nested ``ParameterList``,
float16 BatchNorm, ``MultiheadAttention``'s attributes, ``kdim``/``vdim`` and
``F.multi_head_attention_forward``; against PyTorch in float64."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn as nn
import tensorlib.nn.functional as F

RNG = np.random.default_rng(0)

INPLACE_MODULES = [
    ("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.2,)), ("ELU", (0.5,)), ("CELU", (0.7,)),
    ("SELU", ()), ("SiLU", ()), ("Mish", ()), ("Hardswish", ()), ("Hardsigmoid", ()),
    ("Hardtanh", (-2.0, 2.0)), ("Threshold", (0.1, 20.0)), ("RReLU", (0.1, 0.3)),
    ("Dropout", (0.5,)), ("Dropout1d", (0.5,)), ("Dropout2d", (0.5,)), ("Dropout3d", (0.5,)),
    ("AlphaDropout", (0.5,)), ("FeatureAlphaDropout", (0.5,)),
]


@pytest.mark.parity
@pytest.mark.parametrize("name, args", INPLACE_MODULES)
@pytest.mark.parametrize("inplace", [False, True])
def test_inplace_flag_positional_and_keyword_like_pytorch(name, args, inplace):
    torch = pytest.importorskip("torch")
    ours_pos = getattr(nn, name)(*args, inplace)
    theirs_pos = getattr(torch.nn, name)(*args, inplace)
    ours_kw = getattr(nn, name)(*args, inplace=inplace)
    assert repr(ours_pos) == repr(theirs_pos) == repr(ours_kw)
    assert ours_pos.inplace is inplace
    shapes = {"Dropout1d": (2, 3, 4), "Dropout3d": (2, 3, 2, 2, 2)}
    x = RNG.standard_normal(shapes.get(name, (2, 3, 4, 5)))
    ours_pos.eval()
    theirs_pos.eval()
    ours = ours_pos(tl.tensor(x)).numpy()
    theirs = theirs_pos(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parity
def test_inplace_result_equals_and_keeps_leaf_gradient():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((3, 4))
    for name in ("relu", "relu6", "silu", "selu", "elu", "hardswish", "mish"):
        ours = tl.tensor(x, requires_grad=True)
        out = getattr(F, name)(ours * 1.0, inplace=True)
        out.sum().backward()
        theirs = torch.tensor(x, requires_grad=True)
        t_out = getattr(torch.nn.functional, name)(theirs * 1.0, inplace=True)
        t_out.sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)
    # dropout's fourth positional argument is inplace, as in PyTorch
    y = tl.tensor(x)
    assert F.dropout(y, 0.5, False, True) is y
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):  # as PyTorch
        assert F.dropout2d(tl.ones(2, 3, 4), 0.5, False, True).shape == (2, 3, 4)
    assert F.dropout(y, 0.5, True, False, generator=tl.Generator(0)).shape == (3, 4)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["Softmax", "LogSoftmax", "Softmin"])
@pytest.mark.parametrize("shape", [(5,), (2, 5), (2, 3, 4), (2, 3, 4, 2)])
def test_softmax_modules_without_dim_use_pytorch_implicit_dim(name, shape):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal(shape)
    assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)()) == f"{name}(dim=None)"
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        ours = getattr(nn, name)()(tl.tensor(x)).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(torch.nn, name)()(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


RESETTABLE = [
    lambda cls: cls(3, 2), lambda cls: cls(2, 3, 4, 2), lambda cls: cls(2, 4, 3),
    lambda cls: cls(2, 4, 3), lambda cls: cls(2, 4, 3), lambda cls: cls(2, 4, 3),
    lambda cls: cls(2, 4, 3), lambda cls: cls(2, 4, 3), lambda cls: cls(5, 3),
    lambda cls: cls(5, 3), lambda cls: cls(3, 4), lambda cls: cls(3, 4, 2),
]
RESETTABLE_NAMES = ["Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                    "ConvTranspose2d", "ConvTranspose3d", "Embedding", "EmbeddingBag", "RNNCell",
                    "LSTM"]


@pytest.mark.parametrize("name, make", list(zip(RESETTABLE_NAMES, RESETTABLE, strict=True)))
def test_reset_parameters_override_without_generator_is_called(name, make):
    base = getattr(nn, name)

    class Scaled(base):  # type: ignore[misc, valid-type]
        def reset_parameters(self):  # timm's ScaledStdConv2d style: no generator argument
            self.calls = getattr(self, "calls", 0) + 1
            super().reset_parameters()

    layer = make(Scaled)
    assert layer.calls == 1
    # with a generator, the generator is passed (and the values are reproducible)
    first, second = make(base), make(base)
    assert first is not second
    one = make(lambda *a: base(*a, generator=tl.Generator(3)))
    two = make(lambda *a: base(*a, generator=tl.Generator(3)))
    for p, q in zip(one.parameters(), two.parameters(), strict=True):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


POSITIONAL = {
    "Linear": (2, 3, True),
    "Bilinear": (2, 3, 4, True),
    "Conv1d": (2, 3, 3, 1, 0, 1, 1, True, "zeros"),
    "Conv2d": (2, 3, 3, 1, 0, 1, 1, True, "zeros"),
    "Conv3d": (2, 3, 3, 1, 0, 1, 1, True, "zeros"),
    "ConvTranspose1d": (2, 3, 3, 1, 0, 0, 1, True, 1, "zeros"),
    "ConvTranspose2d": (2, 3, 3, 1, 0, 0, 1, True, 1, "zeros"),
    "ConvTranspose3d": (2, 3, 3, 1, 0, 0, 1, True, 1, "zeros"),
    "Embedding": (5, 3, None, None, 2.0, False, False, None, False),
    "LayerNorm": (4, 1e-5, True, True),
    "RMSNorm": (4, None, True),
    "GroupNorm": (2, 4, 1e-5, True),
    "BatchNorm2d": (4, 1e-5, 0.1, True, True),
    "InstanceNorm2d": (4, 1e-5, 0.1, True, True),
    "SyncBatchNorm": (4, 1e-5, 0.1, True, True, None),
    "PReLU": (2, 0.25),
    "MultiheadAttention": (4, 2, 0.0, True, False, False, None, None, False),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", list(POSITIONAL))
def test_device_and_dtype_positional_as_in_pytorch(name):
    torch = pytest.importorskip("torch")
    ours = inspect.signature(getattr(nn, name).__init__).parameters
    theirs = inspect.signature(getattr(torch.nn, name).__init__).parameters
    positional = [k for k, p in theirs.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert [k for k, p in ours.items() if p.kind is p.POSITIONAL_OR_KEYWORD] == positional
    layer = getattr(nn, name)(*POSITIONAL[name], None, tl.float64)
    assert all(p.dtype == tl.float64 for p in layer.parameters())


@pytest.mark.parity
@pytest.mark.parametrize("max_norm, norm_type, by_freq, padding_idx", [
    (1.0, 2.0, False, None), (1.5, 1.0, True, None), (None, 2.0, True, 2), (0.5, 3.0, True, 0),
])
def test_embedding_max_norm_and_scale_grad_by_freq_match_pytorch(
    max_norm, norm_type, by_freq, padding_idx
):
    torch = pytest.importorskip("torch")
    table = RNG.standard_normal((6, 3)) * 2
    ids = np.array([[0, 2, 2], [5, 0, 1]])
    grad = RNG.standard_normal((2, 3, 3))
    results = []
    for lib in (tl, torch):
        layer = lib.nn.Embedding(6, 3, padding_idx, max_norm, norm_type, by_freq,
                                 dtype=lib.float64)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(table))
        out = layer(lib.tensor(ids))
        out.backward(lib.tensor(grad))
        results.append((out.detach().numpy(), layer.weight.detach().numpy(),
                        layer.weight.grad.numpy(), repr(layer)))
        # the functional form renormalises its table in place as well
        weight = lib.tensor(table)
        lib.nn.functional.embedding(lib.tensor(ids), weight, padding_idx, max_norm, norm_type)
        results[-1] += (weight.numpy(),)
    for ours, theirs in zip(*results, strict=True):
        if isinstance(ours, str):
            assert ours == theirs
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_embedding_weight_freeze_sparse_and_gradcheck():
    table = tl.tensor(RNG.standard_normal((4, 2)))
    frozen = nn.Embedding(4, 2, _weight=table, _freeze=True)
    assert not frozen.weight.requires_grad
    np.testing.assert_array_equal(frozen.weight.numpy(), table.numpy())
    with pytest.raises(ValueError, match="_weight must have shape"):
        nn.Embedding(3, 2, _weight=table)
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.Embedding(4, 2, sparse=True)(tl.tensor([1]))
    ids = tl.tensor(np.array([0, 1, 1, 3]))
    weight = tl.tensor(RNG.standard_normal((4, 2)), requires_grad=True)
    F.embedding(ids, weight, scale_grad_by_freq=True).sum().backward()
    # each row's gradient (a sum over its occurrences) divided by how often its id occurs
    np.testing.assert_array_equal(weight.grad.numpy(), [[1, 1], [1, 1], [0, 0], [1, 1]])
    assert tl.autograd.gradcheck(lambda w: F.embedding(ids, w, max_norm=None), (weight,))


@pytest.mark.parity
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 4), (2, 3, 2, 2, 2)])
def test_sync_batchnorm_is_batchnorm_in_one_process(shape):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal(shape)
    grad = RNG.standard_normal(shape)
    results = []
    for lib in (tl, torch):
        layer = lib.nn.SyncBatchNorm(3, dtype=lib.float64)
        inputs = lib.tensor(x, requires_grad=True)
        out = layer(inputs)
        out.backward(lib.tensor(grad))
        layer.eval()
        results.append((out.detach().numpy(), inputs.grad.numpy(), layer.running_mean.numpy(),
                        layer.running_var.numpy(), layer(lib.tensor(x)).detach().numpy(),
                        repr(layer), list(layer.state_dict())))
    for ours, theirs in zip(*results, strict=True):
        if isinstance(ours, np.ndarray):
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
        else:
            assert ours == theirs
    with pytest.raises(ValueError, match="at least 2D"):
        nn.SyncBatchNorm(3)(tl.zeros(3))


@pytest.mark.parity
def test_convert_sync_batchnorm_keeps_parameters_buffers_and_mode():
    torch = pytest.importorskip("torch")
    reprs, keys = [], []
    for lib in (tl, torch):
        model = lib.nn.Sequential(
            lib.nn.Conv2d(3, 3, 1), lib.nn.BatchNorm2d(3, affine=False),
            lib.nn.Sequential(lib.nn.BatchNorm1d(3).eval()), lib.nn.BatchNorm3d(3, bias=False),
        )
        old = model[2][0]
        converted = lib.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        new = converted[2][0]
        assert type(new).__name__ == "SyncBatchNorm" and not new.training
        assert new.weight is old.weight and new.running_mean is old.running_mean
        reprs.append(repr(converted))
        keys.append(list(converted.state_dict()))
    assert keys[0] == keys[1]
    assert reprs[0] == reprs[1]
    single = nn.BatchNorm2d(2)
    assert isinstance(nn.SyncBatchNorm.convert_sync_batchnorm(single), nn.SyncBatchNorm)


@pytest.mark.parity
def test_share_memory_nested_parameter_list_and_half_batchnorm():
    torch = pytest.importorskip("torch")
    layer = nn.Linear(2, 2)
    assert layer.share_memory() is layer
    lists = []
    for lib in (tl, torch):
        inner = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2))])
        outer = lib.nn.ParameterList([inner, lib.nn.Parameter(lib.zeros(3))])
        outer.append(lib.nn.Parameter(lib.ones(1)))
        assert outer[0] is inner and len(outer) == 3
        lists.append((list(outer.state_dict()), [n for n, _ in outer.named_parameters()],
                      [type(v).__name__ for v in outer]))
    assert lists[0] == lists[1]
    x = RNG.standard_normal((2, 2, 3, 3))
    for train in (False, True):
        ours = nn.BatchNorm2d(2).train(train)
        theirs = torch.nn.BatchNorm2d(2).train(train)
        out, t_out = ours(tl.tensor(x).half()), theirs(torch.tensor(x).half())
        assert out.dtype == tl.float16 and t_out.dtype == torch.float16
        np.testing.assert_allclose(out.detach().float().numpy(), t_out.detach().float().numpy(),
                                   atol=2e-3)
        assert ours.running_mean.dtype == tl.float32
        np.testing.assert_allclose(ours.running_mean.numpy(), theirs.running_mean.numpy(),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("kdim, vdim", [(None, None), (3, 5), (6, 6)])
def test_multihead_attention_attributes_and_state_dict_like_pytorch(kdim, vdim):
    torch = pytest.importorskip("torch")
    ours = nn.MultiheadAttention(6, 2, 0.0, True, False, False, kdim, vdim, dtype=tl.float64)
    theirs = torch.nn.MultiheadAttention(6, 2, 0.0, True, False, False, kdim, vdim,
                                         dtype=torch.float64)
    for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_weight",
                 "in_proj_bias", "bias_k", "bias_v"):
        mine, torchs = getattr(ours, name), getattr(theirs, name)
        assert (mine is None) == (torchs is None), name
        if mine is not None:
            assert tuple(mine.shape) == tuple(torchs.shape)
    for name in ("add_zero_attn", "_qkv_same_embed_dim", "batch_first", "dropout", "head_dim",
                 "kdim", "vdim", "embed_dim", "num_heads"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: tl.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    widths = (6, kdim or 6, vdim or 6)
    q, k, v = (RNG.standard_normal((4 + i, 2, w)) for i, w in enumerate(widths))
    k = k[:5]
    v = v[:5]
    pad = np.array([[False, False, True, False, False], [False] * 5])
    for need in (True, False):
        out, weights = ours(*(tl.tensor(a) for a in (q, k, v)), key_padding_mask=tl.tensor(pad),
                            need_weights=need)
        t_out, t_weights = theirs(*(torch.tensor(a) for a in (q, k, v)),
                                  key_padding_mask=torch.tensor(pad), need_weights=need)
        np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
        if need:
            np.testing.assert_allclose(weights.detach().numpy(), t_weights.detach().numpy(),
                                       rtol=1e-10, atol=1e-12)


def _torch_mha_arguments(torch, layer, lib):
    """``F.multi_head_attention_forward``'s weight arguments from a torch layer, as ``lib``
    tensors requiring grad."""
    def convert(t):
        return None if t is None else lib.tensor(t.detach().numpy(), requires_grad=True)

    return [convert(layer.in_proj_weight), convert(layer.in_proj_bias),
            convert(layer.out_proj.weight), convert(layer.out_proj.bias)]


@pytest.mark.parity
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("masks", ["none", "causal", "float-and-padding"])
def test_multi_head_attention_forward_matches_pytorch(batched, masks):
    torch = pytest.importorskip("torch")
    layer = torch.nn.MultiheadAttention(8, 2, dtype=torch.float64)
    shape = (5, 3, 8) if batched else (5, 8)
    x = RNG.standard_normal(shape)
    attn = None if masks == "none" else np.triu(np.ones((5, 5), dtype=bool), 1)
    if masks == "float-and-padding":
        attn = RNG.standard_normal((5, 5))
    pad = np.array([[False] * 4 + [True]] * 3) if masks == "float-and-padding" else None
    if pad is not None:  # a float padding mask, like the float attn_mask (PyTorch warns otherwise)
        pad = np.where(pad if batched else pad[0], -np.inf, 0.0)
    results = []
    for lib in (tl, torch):
        w_in, b_in, w_out, b_out = _torch_mha_arguments(torch, layer, lib)
        inputs = lib.tensor(x, requires_grad=True)
        out, weights = lib.nn.functional.multi_head_attention_forward(
            inputs, inputs, inputs, 8, 2, w_in, b_in, None, None, False, 0.0, w_out, b_out,
            training=True, key_padding_mask=None if pad is None else lib.tensor(pad),
            attn_mask=None if attn is None else lib.tensor(attn), average_attn_weights=False,
            is_causal=masks == "causal",
        )
        (out.sum() + (weights * weights).sum()).backward()
        results.append([out.detach().numpy(), weights.detach().numpy(), inputs.grad.numpy(),
                        w_in.grad.numpy(), w_out.grad.numpy(), b_in.grad.numpy()])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_multi_head_attention_forward_errors_and_gradcheck():
    layer = nn.MultiheadAttention(4, 2, dtype=tl.float64, generator=tl.Generator(0))
    x = tl.tensor(RNG.standard_normal((3, 2, 4)), requires_grad=True)
    args = (4, 2, layer.in_proj_weight, layer.in_proj_bias)
    tail = (layer.out_proj.weight, layer.out_proj.bias)
    assert tl.autograd.gradcheck(
        lambda q: F.multi_head_attention_forward(q, q, q, *args, None, None, False, 0.0, *tail)[0],
        (x,),
    )
    bias = tl.zeros(1, 1, 4, dtype=tl.float64)
    # static_k must hold N * num_heads = 4 rows of (S, head_dim); x has 3: PyTorch's assertion
    with pytest.raises(AssertionError, match="static_k"):
        F.multi_head_attention_forward(x, x, x, *args, None, None, False, 0.0, *tail,
                                       static_k=x)
    with pytest.raises(ValueError, match="both bias_k and bias_v"):
        F.multi_head_attention_forward(x, x, x, *args, bias, None, False, 0.0, *tail)
    with pytest.raises(ValueError, match="expected a query of 6 features"):
        F.multi_head_attention_forward(x, x, x, 6, 2, *args[2:], None, None, False, 0.0, *tail)
    with pytest.raises(ValueError, match="use_separate_proj_weight"):
        F.multi_head_attention_forward(x, x, x, *args, None, None, False, 0.0, *tail,
                                       use_separate_proj_weight=True)
    with pytest.raises(ValueError, match="kdim must be None or an int"):
        nn.MultiheadAttention(4, 2, kdim=0)


@pytest.mark.parity
@pytest.mark.parametrize("add_bias_kv, add_zero_attn", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_extra_key_rows_match_pytorch(add_bias_kv, add_zero_attn, batch_first):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.MultiheadAttention(6, 3, 0.0, True, add_bias_kv, add_zero_attn, None, 4,
                                         batch_first, dtype=torch.float64)
    ours = nn.MultiheadAttention(6, 3, 0.0, True, add_bias_kv, add_zero_attn, None, 4,
                                 batch_first, dtype=tl.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert (ours.bias_k is None) == (theirs.bias_k is None) and ours.add_zero_attn == add_zero_attn
    ours.load_state_dict({k: tl.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    q, k, v = RNG.standard_normal((3, 2, 6)), RNG.standard_normal((4, 2, 6)), RNG.standard_normal(
        (4, 2, 4))
    if batch_first:
        q, k, v = (a.transpose(1, 0, 2) for a in (q, k, v))
    attn = np.zeros((3, 4), dtype=bool)
    attn[0, 1] = True
    pad = np.array([[False, False, False, True], [True, False, False, False]])
    grads = RNG.standard_normal((2, 3, 4 + add_bias_kv + add_zero_attn))
    results = []
    for lib, layer in ((tl, ours), (torch, theirs)):
        inputs = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        fused, _ = layer(*inputs, key_padding_mask=lib.tensor(pad), attn_mask=lib.tensor(attn),
                         need_weights=False)
        out, weights = layer(*inputs, key_padding_mask=lib.tensor(pad),
                             attn_mask=lib.tensor(attn))
        (fused.sum() + out.sum() + (weights * lib.tensor(grads)).sum()).backward()
        results.append([fused.detach().numpy(), out.detach().numpy(), weights.detach().numpy()]
                       + [a.grad.numpy() for a in inputs]
                       + [p.grad.numpy() for p in layer.parameters()])
    assert len(results[0]) == len(results[1])
    for mine, torchs in zip(*results, strict=True):
        np.testing.assert_allclose(mine, torchs, rtol=1e-9, atol=1e-12)
