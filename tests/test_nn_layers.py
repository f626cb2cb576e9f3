"""The layers of chapter 4: values against numpy definitions, float64 gradchecks, init,
Dropout's statistics and determinism, and the error messages for bad input.

Written from the spec (PyTorch's behaviour). Every layer is gradchecked in float64 with
respect to its input and every parameter; shapes are tiny to keep the suite fast.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib import nn
from tensorlib.autograd import gradcheck

# ----------------------------------------------------------------------------- helpers


def tensor(data, dtype=np.float64, requires_grad=False):
    """A tensorlib tensor holding ``data`` as ``dtype``."""
    return tl.tensor(np.asarray(data, dtype=dtype), requires_grad=requires_grad)


def ids_tensor(data):
    return tl.tensor(np.asarray(data, dtype=np.int64))


def to_numpy(x) -> np.ndarray | None:
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(x.numpy())


def randn(rng, *shape, requires_grad=False):
    return tensor(rng.standard_normal(shape), requires_grad=requires_grad)


def make(cls, *args, **kwargs):
    """A layer with float64 parameters (``Module.double()``, as in PyTorch)."""
    return cls(*args, **kwargs).double()


def params_np(module) -> dict[str, np.ndarray]:
    return {name: to_numpy(p) for name, p in module.named_parameters()}


def check_gradients(fn, inputs, rng, **tolerances):
    """gradcheck ``sum(fn(*inputs) * C)`` for a fixed random cotangent C.

    A random cotangent (not a plain sum) so that layers whose outputs sum to a constant
    (softmax, normalisation) still have their Jacobian tested.
    """
    cotangent = {}

    def loss(*args):
        out = fn(*args)
        if "c" not in cotangent:
            cotangent["c"] = tensor(rng.standard_normal(tuple(out.shape)))
        return (out * cotangent["c"]).sum()

    assert gradcheck(loss, list(inputs), **tolerances)


def check_module_gradients(module, rng, *inputs):
    """gradcheck a layer in float64 with respect to its float inputs and every parameter.

    The parameters are passed to gradcheck as inputs: gradcheck perturbs them in place, and
    the module reads them on every call (test_module_gradcheck_catches_a_parameter_bug proves
    the perturbation is seen). Inputs that do not require grad (integer ids) are held fixed.
    """
    params = list(module.parameters())
    for p in params:
        assert to_numpy(p).dtype == np.float64, "gradcheck needs float64 parameters"
    moving = [i for i, x in enumerate(inputs) if x.requires_grad]

    def fn(*args):
        call = list(inputs)
        for i, arg in zip(moving, args[: len(moving)], strict=True):
            call[i] = arg
        return module(*call)

    check_gradients(fn, [inputs[i] for i in moving] + params, rng)


def conv2d_reference(x, w, b, stride, padding):
    """Direct loops: y[n, o, i, j] = b[o] + sum_{c,u,v} w[o, c, u, v] xp[n, c, i*sh+u, j*sw+v]."""
    sh, sw = stride
    ph, pw = padding
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, _, hp, wp = xp.shape
    o, _, kh, kw = w.shape
    oh, ow = (hp - kh) // sh + 1, (wp - kw) // sw + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * sh : i * sh + kh, j * sw : j * sw + kw]
            y[:, :, i, j] = np.einsum("ncuv,ocuv->no", patch, w)
    if b is not None:
        y += b[None, :, None, None]
    return y


def pool2d_reference(x, kernel, stride, padding, reduce):
    kh, kw = kernel
    sh, sw = stride
    ph, pw = padding
    fill = -np.inf if reduce is np.max else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=fill)
    oh, ow = (xp.shape[2] - kh) // sh + 1, (xp.shape[3] - kw) // sw + 1
    y = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = reduce(
                xp[:, :, i * sh : i * sh + kh, j * sw : j * sw + kw], axis=(2, 3)
            )
    return y


def layer_norm_reference(x, k, w, b, eps):
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    return y * w + b if w is not None else y


def log_softmax_reference(z, axis=-1):
    z = z - z.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def assert_error_names(excinfo, *fragments):
    message = str(excinfo.value)
    for fragment in fragments:
        assert re.search(fragment, message), f"{fragment!r} not in error message {message!r}"


# ----------------------------------------------------------------------------- the checker itself


def test_module_gradcheck_catches_a_parameter_bug():
    """A module that reads its weight through a copy has no gradient path: gradcheck must fail."""

    class Broken(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(tensor(np.array([0.5, -1.5])))

        def forward(self, x):
            return x * tensor(to_numpy(self.weight).copy())  # values used, graph cut

    rng = np.random.default_rng(0)
    with pytest.raises((AssertionError, RuntimeError, ValueError)):
        check_module_gradients(Broken(), rng, randn(rng, 3, 2, requires_grad=True))


# ----------------------------------------------------------------------------- Linear


@pytest.mark.parametrize(
    "layer, shape",
    [
        (lambda: nn.Linear(4, 3), (2, 4)),
        (lambda: nn.Conv2d(1, 2, 3), (1, 1, 5, 5)),
        (lambda: nn.LayerNorm(4), (2, 4)),
        (lambda: nn.RMSNorm(4), (2, 4)),
    ],
)
def test_float64_input_to_float32_layer_raises_naming_both_dtypes(layer, shape):
    module = layer()
    x = tl.ones(*shape, dtype=tl.float64)
    with pytest.raises(TypeError, match=r"input has dtype float64 but weight has dtype float32"):
        module(x)
    assert module.double()(x).dtype == tl.float64


def test_linear_shapes_and_formula_over_leading_dims():
    rng = np.random.default_rng(0)
    layer = make(nn.Linear, 4, 3)
    assert tuple(layer.weight.shape) == (3, 4) and tuple(layer.bias.shape) == (3,)
    assert (layer.in_features, layer.out_features) == (4, 3)
    x = randn(rng, 2, 5, 4)
    y = layer(x)
    assert tuple(y.shape) == (2, 5, 3)
    p = params_np(layer)
    np.testing.assert_allclose(to_numpy(y), to_numpy(x) @ p["weight"].T + p["bias"], rtol=1e-12)
    np.testing.assert_allclose(
        to_numpy(F.linear(x, layer.weight, layer.bias)), to_numpy(y), rtol=1e-12
    )


def test_linear_without_bias():
    rng = np.random.default_rng(1)
    layer = make(nn.Linear, 4, 3, bias=False)
    assert layer.bias is None
    assert [name for name, _ in layer.named_parameters()] == ["weight"]
    x = randn(rng, 5, 4)
    np.testing.assert_allclose(
        to_numpy(layer(x)), to_numpy(x) @ to_numpy(layer.weight).T, rtol=1e-12
    )


def test_linear_default_init_is_uniform_within_one_over_sqrt_fan_in():
    tl.manual_seed(0)
    layer = nn.Linear(64, 128)
    bound = 1 / math.sqrt(64)
    w, b = to_numpy(layer.weight), to_numpy(layer.bias)
    assert w.dtype == np.float32  # float32 by default
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.99 * bound  # 8192 draws reach the edge
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound / math.sqrt(3)  # uniform, not normal
    assert abs(w.mean()) < 0.05 * bound
    assert np.abs(b).max() > 0.5 * bound


def test_init_is_reproducible_through_manual_seed():
    tl.manual_seed(7)
    a = nn.Linear(5, 3)
    tl.manual_seed(7)
    b = nn.Linear(5, 3)
    tl.manual_seed(8)
    c = nn.Linear(5, 3)
    np.testing.assert_array_equal(to_numpy(a.weight), to_numpy(b.weight))
    np.testing.assert_array_equal(to_numpy(a.bias), to_numpy(b.bias))
    assert not np.array_equal(to_numpy(a.weight), to_numpy(c.weight))


@pytest.mark.parametrize(
    "build",
    [
        lambda g: nn.Linear(5, 3, generator=g),
        lambda g: nn.Embedding(6, 4, generator=g),
        lambda g: nn.Conv2d(2, 3, 3, generator=g),
        lambda g: nn.PositionalEmbedding(5, 2, generator=g),
    ],
    ids=["Linear", "Embedding", "Conv2d", "PositionalEmbedding"],
)
def test_init_is_reproducible_through_a_generator(build):
    a = params_np(build(tl.random.Generator(11)))
    b = params_np(build(tl.random.Generator(11)))
    c = params_np(build(tl.random.Generator(12)))
    assert list(a) == list(b) and a
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert any(not np.array_equal(a[name], c[name]) for name in a)


def test_dtype_factory_argument():
    layer = nn.Linear(3, 2, dtype=tl.float64)
    assert to_numpy(layer.weight).dtype == np.float64 and to_numpy(layer.bias).dtype == np.float64
    assert to_numpy(layer(tensor(np.ones((1, 3))))).dtype == np.float64
    assert to_numpy(nn.Linear(3, 2).double().weight).dtype == np.float64


def test_linear_gradcheck():
    rng = np.random.default_rng(2)
    check_module_gradients(make(nn.Linear, 3, 2), rng, randn(rng, 2, 2, 3, requires_grad=True))
    check_module_gradients(
        make(nn.Linear, 3, 2, bias=False), rng, randn(rng, 4, 3, requires_grad=True)
    )


def test_linear_rejects_wrong_last_dim_naming_both():
    layer = nn.Linear(4, 3)
    with pytest.raises((ValueError, RuntimeError)) as info:
        layer(tensor(np.zeros((2, 5)), dtype=np.float32))
    assert_error_names(info, r"\b4\b", r"\b5\b")


# ----------------------------------------------------------------------------- Embedding


def test_embedding_looks_up_rows_for_ids_of_any_shape():
    layer = make(nn.Embedding, 7, 3)
    weight = to_numpy(layer.weight)
    assert weight.shape == (7, 3)
    for ids in ([4], [[1, 2, 6], [0, 0, 3]], [[[5]], [[2]]]):
        ids = np.array(ids)
        out = layer(ids_tensor(ids))
        assert tuple(out.shape) == ids.shape + (3,)
        np.testing.assert_array_equal(to_numpy(out), weight[ids])
    np.testing.assert_array_equal(
        to_numpy(F.embedding(ids_tensor([3, 1]), layer.weight)), weight[[3, 1]]
    )


def test_embedding_default_init_is_standard_normal():
    tl.manual_seed(0)
    w = to_numpy(nn.Embedding(100, 100).weight)
    assert abs(w.mean()) < 0.05 and abs(w.std() - 1.0) < 0.05


def test_embedding_repeated_ids_accumulate_gradient():
    rng = np.random.default_rng(3)
    layer = make(nn.Embedding, 5, 2)
    ids = np.array([[1, 3, 1], [1, 0, 3]])
    cot = rng.standard_normal((2, 3, 2))
    (layer(ids_tensor(ids)) * tensor(cot)).sum().backward()
    expected = np.zeros((5, 2))
    np.add.at(expected, ids, cot)
    np.testing.assert_allclose(to_numpy(layer.weight.grad), expected, rtol=1e-12, atol=1e-12)
    assert np.all(to_numpy(layer.weight.grad)[[2, 4]] == 0)


def test_embedding_gradcheck():
    rng = np.random.default_rng(4)
    layer = make(nn.Embedding, 4, 3)
    ids = ids_tensor([[0, 2, 2], [3, 0, 2]])
    check_gradients(lambda w: F.embedding(ids, w), [layer.weight], rng)
    check_module_gradients(layer, rng, ids)


@pytest.mark.parametrize("bad", [7, 12, -1])
def test_embedding_rejects_out_of_range_ids(bad):
    layer = nn.Embedding(7, 3)
    with pytest.raises((IndexError, ValueError)) as info:
        layer(ids_tensor([0, bad, 2]))
    assert_error_names(info, re.escape(str(bad)), r"\b7\b")


# ----------------------------------------------------------------------------- PositionalEmbedding


def test_positional_embedding_adds_position_vectors():
    rng = np.random.default_rng(5)
    layer = make(nn.PositionalEmbedding, 6, 3)
    (name, weight), = list(layer.named_parameters())
    weight = to_numpy(weight)
    assert weight.shape == (6, 3)
    x = randn(rng, 2, 4, 3)
    np.testing.assert_allclose(to_numpy(layer(x)), to_numpy(x) + weight[None, :4], rtol=1e-12)
    x6 = randn(rng, 1, 6, 3)
    np.testing.assert_allclose(to_numpy(layer(x6)), to_numpy(x6) + weight[None], rtol=1e-12)


def test_positional_embedding_gradcheck():
    rng = np.random.default_rng(6)
    check_module_gradients(
        make(nn.PositionalEmbedding, 5, 2), rng, randn(rng, 2, 3, 2, requires_grad=True)
    )


def test_positional_embedding_rejects_too_long_sequences():
    layer = nn.PositionalEmbedding(8, 4)
    with pytest.raises((ValueError, IndexError)) as info:
        layer(tensor(np.zeros((1, 9, 4)), dtype=np.float32))
    assert_error_names(info, r"\b9\b", r"\b8\b")


# ----------------------------------------------------------------------------- LayerNorm, RMSNorm


@pytest.mark.parametrize(
    "shape, normalized", [((3, 5), 5), ((2, 3, 4), (3, 4)), ((2, 2, 3, 2), (2, 3, 2))]
)
def test_layer_norm_matches_definition(shape, normalized):
    rng = np.random.default_rng(7)
    layer = make(nn.LayerNorm, normalized)
    k = 1 if isinstance(normalized, int) else len(normalized)
    for p in layer.parameters():  # move off the ones/zeros init so that the affine part is tested
        assert tuple(p.shape) == tuple(shape[-k:])
    layer.weight = nn.Parameter(randn(rng, *shape[-k:]))
    layer.bias = nn.Parameter(randn(rng, *shape[-k:]))
    x = randn(rng, *shape)
    expected = layer_norm_reference(
        to_numpy(x), k, to_numpy(layer.weight), to_numpy(layer.bias), 1e-5
    )
    np.testing.assert_allclose(to_numpy(layer(x)), expected, rtol=1e-10, atol=1e-12)
    functional = F.layer_norm(x, tuple(shape[-k:]), layer.weight, layer.bias, 1e-5)
    np.testing.assert_allclose(to_numpy(functional), expected, rtol=1e-10, atol=1e-12)


def test_layer_norm_init_and_no_affine():
    layer = nn.LayerNorm(4)
    np.testing.assert_array_equal(to_numpy(layer.weight), np.ones(4))
    np.testing.assert_array_equal(to_numpy(layer.bias), np.zeros(4))
    assert layer.eps == 1e-5
    bare = make(nn.LayerNorm, 4, elementwise_affine=False)
    assert list(bare.parameters()) == []
    x = np.random.default_rng(8).standard_normal((3, 4))
    np.testing.assert_allclose(
        to_numpy(bare(tensor(x))), layer_norm_reference(x, 1, None, None, 1e-5), rtol=1e-10
    )


@pytest.mark.parametrize("normalized, shape", [(4, (2, 3, 4)), ((2, 3), (2, 2, 3))])
def test_layer_norm_gradcheck(normalized, shape):
    rng = np.random.default_rng(9)
    layer = make(nn.LayerNorm, normalized)
    layer.weight = nn.Parameter(randn(rng, *layer.weight.shape))
    layer.bias = nn.Parameter(randn(rng, *layer.bias.shape))
    check_module_gradients(layer, rng, randn(rng, *shape, requires_grad=True))


def test_layer_norm_is_stable_on_constant_rows():
    layer = make(nn.LayerNorm, 4)
    layer.bias = nn.Parameter(tensor([0.5, -1.0, 2.0, 0.0]))
    x = tensor(np.full((2, 4), 3.25), requires_grad=True)
    y = layer(x)
    np.testing.assert_allclose(
        to_numpy(y), np.broadcast_to([0.5, -1.0, 2.0, 0.0], (2, 4)), atol=1e-12
    )
    (y * tensor(np.arange(8.0).reshape(2, 4))).sum().backward()
    for g in (x.grad, layer.weight.grad, layer.bias.grad):
        assert np.all(np.isfinite(to_numpy(g)))
    # On a constant row x - mean = 0, so dL/dx = w * g / sigma minus its mean: finite, eps-scaled.
    g = np.arange(8.0).reshape(2, 4)
    expected = (g - g.mean(axis=1, keepdims=True)) / np.sqrt(1e-5)
    np.testing.assert_allclose(to_numpy(x.grad), expected, rtol=1e-6)
    big = make(nn.LayerNorm, 3)(tensor(np.full((1, 3), 1e8)))
    assert np.all(np.isfinite(to_numpy(big)))


def test_layer_norm_rejects_wrong_trailing_shape_naming_both():
    layer = nn.LayerNorm((3, 4))
    with pytest.raises((ValueError, RuntimeError)) as info:
        layer(tensor(np.zeros((2, 3, 5)), dtype=np.float32))
    assert_error_names(info, r"3,\s*4", r"3,\s*5")


def test_rms_norm_matches_definition_and_gradcheck():
    rng = np.random.default_rng(10)
    layer = make(nn.RMSNorm, 4, eps=1e-6)
    np.testing.assert_array_equal(to_numpy(layer.weight), np.ones(4))
    layer.weight = nn.Parameter(randn(rng, 4))
    x = randn(rng, 2, 3, 4)
    xn = to_numpy(x)
    expected = xn / np.sqrt((xn**2).mean(axis=-1, keepdims=True) + 1e-6) * to_numpy(layer.weight)
    np.testing.assert_allclose(to_numpy(layer(x)), expected, rtol=1e-10)
    np.testing.assert_allclose(
        to_numpy(F.rms_norm(x, (4,), layer.weight, 1e-6)), expected, rtol=1e-10
    )
    check_module_gradients(layer, rng, randn(rng, 2, 4, requires_grad=True))


# ----------------------------------------------------------------------------- Dropout


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.9])
def test_dropout_statistics(p):
    n = 200_000
    layer = nn.Dropout(p, generator=tl.random.Generator(int(p * 100)))
    x = np.random.default_rng(11).uniform(1.0, 2.0, size=(400, 500))  # nonzero, so zeros are drops
    out = to_numpy(layer(tensor(x)))
    dropped = out == 0
    # Each element is dropped independently with probability p: the fraction dropped has
    # standard deviation sqrt(p(1-p)/n); six of them fail with probability ~2e-9.
    sigma = math.sqrt(p * (1 - p) / n)
    assert abs(dropped.mean() - p) < 6 * sigma, (dropped.mean(), p)
    np.testing.assert_allclose(out[~dropped], x[~dropped] / (1 - p), rtol=1e-12)
    # E[out] = x: the mean of out/x is 1 with standard deviation sqrt(p/((1-p)n)).
    ratio = out / x
    assert abs(ratio.mean() - 1.0) < 6 * math.sqrt(p / ((1 - p) * n)), ratio.mean()


def test_dropout_same_seed_same_mask_and_generator_advances():
    x = tensor(np.ones((50, 40)))
    a = to_numpy(nn.Dropout(0.5, generator=tl.random.Generator(3))(x))
    b = to_numpy(nn.Dropout(0.5, generator=tl.random.Generator(3))(x))
    c = to_numpy(nn.Dropout(0.5, generator=tl.random.Generator(4))(x))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    layer = nn.Dropout(0.5, generator=tl.random.Generator(3))
    first, second = to_numpy(layer(x)), to_numpy(layer(x))
    np.testing.assert_array_equal(first, a)
    assert not np.array_equal(first, second)  # the generator moves on between calls
    np.testing.assert_array_equal(
        to_numpy(F.dropout(x, 0.5, training=True, generator=tl.random.Generator(3))), a
    )


def test_dropout_is_identity_in_eval_mode_and_at_p_zero():
    rng = np.random.default_rng(12)
    x = randn(rng, 10, 10)
    layer = nn.Dropout(0.5)
    layer.eval()
    np.testing.assert_array_equal(to_numpy(layer(x)), to_numpy(x))
    np.testing.assert_array_equal(to_numpy(nn.Dropout(0.0)(x)), to_numpy(x))
    np.testing.assert_array_equal(to_numpy(F.dropout(x, 0.5, training=False)), to_numpy(x))
    model = nn.Sequential(nn.Linear(10, 10), nn.Dropout(0.9))
    model.eval()
    assert not model[1].training


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5])
def test_dropout_rejects_p_outside_zero_one(p):
    with pytest.raises(ValueError, match=re.escape(str(p))):
        nn.Dropout(p)
    with pytest.raises(ValueError, match=re.escape(str(p))):
        F.dropout(tensor(np.ones(3)), p)


@pytest.mark.parametrize("p", [1, 1.0])
def test_dropout_p_one_says_why_and_what_torch_does(p):
    message = (
        f"p={p!r} would drop everything (and the scale 1/(1-p) is infinite); tensorlib "
        "requires 0 <= p < 1 (torch allows p=1 and returns zeros)"
    )
    with pytest.raises(ValueError, match=re.escape(f"Dropout: {message}")):
        nn.Dropout(p)
    with pytest.raises(ValueError, match=re.escape(f"dropout: {message}")):
        # checked even where it would change nothing
        F.dropout(tensor(np.ones(3)), p, training=False)


def test_dropout_backward_uses_the_same_mask():
    x = tensor(np.ones((20, 30)), requires_grad=True)
    layer = nn.Dropout(0.25, generator=tl.random.Generator(5))
    out = layer(x)
    out.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), to_numpy(out), rtol=1e-12)  # d out/dx = mask/(1-p)


def test_dropout_gradcheck_with_a_fixed_mask():
    """A fresh generator with one seed on every call gives one mask: the op is then linear in x."""
    rng = np.random.default_rng(22)

    def fn(x):
        return F.dropout(x, 0.4, training=True, generator=tl.random.Generator(9))

    check_gradients(fn, [randn(rng, 3, 5, requires_grad=True)], rng)


# ----------------------------------------------------------------------------- activations, Flatten


def _gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


ACTIVATIONS = [
    ("ReLU", lambda: nn.ReLU(), lambda x: np.maximum(x, 0)),
    ("GELU", lambda: nn.GELU(), _gelu),
    ("GELU-tanh", lambda: nn.GELU(approximate="tanh"), _gelu_tanh),
    ("Tanh", lambda: nn.Tanh(), np.tanh),
    ("Sigmoid", lambda: nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    ("SiLU", lambda: nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    ("Softmax0", lambda: nn.Softmax(dim=0), lambda x: np.exp(log_softmax_reference(x, 0))),
    ("Softmax-1", lambda: nn.Softmax(dim=-1), lambda x: np.exp(log_softmax_reference(x, -1))),
    ("LogSoftmax1", lambda: nn.LogSoftmax(dim=1), lambda x: log_softmax_reference(x, 1)),
]


@pytest.mark.parametrize("name, build, reference", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_values_and_gradcheck(name, build, reference):
    rng = np.random.default_rng(13)
    x = rng.standard_normal((3, 4, 2)) * 2
    x[np.abs(x) < 0.05] = 0.3  # keep away from ReLU's kink
    layer = build()
    np.testing.assert_allclose(to_numpy(layer(tensor(x))), reference(x), rtol=1e-10, atol=1e-12)
    check_gradients(layer, [tensor(x, requires_grad=True)], rng)


def test_softmax_is_stable_for_large_logits():
    out = to_numpy(nn.Softmax(dim=-1)(tensor([[1000.0, 1000.0], [-1000.0, 0.0]])))
    np.testing.assert_allclose(out, [[0.5, 0.5], [0.0, 1.0]], atol=1e-12)


def test_flatten():
    rng = np.random.default_rng(14)
    x = randn(rng, 2, 3, 4, 5, requires_grad=True)
    assert tuple(nn.Flatten()(x).shape) == (2, 60)
    assert tuple(nn.Flatten(0, 1)(x).shape) == (6, 4, 5)
    assert tuple(nn.Flatten(start_dim=2)(x).shape) == (2, 3, 20)
    np.testing.assert_array_equal(to_numpy(nn.Flatten()(x)), to_numpy(x).reshape(2, 60))
    check_gradients(nn.Flatten(), [randn(rng, 2, 2, 3, requires_grad=True)], rng)


# ----------------------------------------------------------------------------- MLP


def test_mlp_is_a_module_of_linear_layers_and_gradchecks():
    rng = np.random.default_rng(15)
    tl.manual_seed(0)
    mlp = nn.MLP(3, [5, 4], 2).double()
    linears = [m for m in mlp.modules() if isinstance(m, nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(3, 5), (5, 4), (4, 2)]
    assert sum(int(np.prod(p.shape)) for p in mlp.parameters()) == 3 * 5 + 5 + 5 * 4 + 4 + 4 * 2 + 2
    x = randn(rng, 6, 3, requires_grad=True)
    assert tuple(mlp(x).shape) == (6, 2)
    check_module_gradients(mlp, rng, x)


# ----------------------------------------------------------------------------- Conv2d


def test_conv2d_28x28_stride2_pad1_gives_14x14():
    x = tensor(np.zeros((2, 1, 28, 28)), dtype=np.float32)
    assert tuple(nn.Conv2d(1, 8, 3, stride=2, padding=1)(x).shape) == (2, 8, 14, 14)


CONV_CASES = [
    # in, out, kernel, stride, padding, input H, W
    (2, 3, 3, 1, 0, 6, 5),
    (2, 3, 3, 2, 1, 7, 7),
    (1, 2, (2, 3), 1, 0, 5, 6),
    (2, 2, (3, 2), (2, 1), (1, 0), 6, 5),
    (3, 2, 1, 1, 0, 4, 4),
    (1, 2, 3, 3, 2, 5, 5),
]


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


@pytest.mark.parametrize("cin, cout, k, s, p, h, w", CONV_CASES)
def test_conv2d_matches_loops(cin, cout, k, s, p, h, w):
    rng = np.random.default_rng(16)
    layer = make(nn.Conv2d, cin, cout, k, stride=s, padding=p)
    kh, kw = _pair(k)
    assert tuple(layer.weight.shape) == (cout, cin, kh, kw) and tuple(layer.bias.shape) == (cout,)
    x = randn(rng, 2, cin, h, w)
    expected = conv2d_reference(
        to_numpy(x), to_numpy(layer.weight), to_numpy(layer.bias), _pair(s), _pair(p)
    )
    y = layer(x)
    assert tuple(y.shape) == expected.shape
    np.testing.assert_allclose(to_numpy(y), expected, rtol=1e-10, atol=1e-12)
    functional = F.conv2d(x, layer.weight, layer.bias, stride=s, padding=p)
    np.testing.assert_allclose(to_numpy(functional), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cin, cout, k, s, p, h, w", CONV_CASES[:4])
def test_conv2d_gradcheck(cin, cout, k, s, p, h, w):
    rng = np.random.default_rng(17)
    layer = make(nn.Conv2d, cin, cout, k, stride=s, padding=p)
    check_module_gradients(layer, rng, randn(rng, 1, cin, h, w, requires_grad=True))


def test_conv2d_without_bias_gradcheck():
    rng = np.random.default_rng(18)
    layer = make(nn.Conv2d, 1, 2, 2, bias=False)
    assert layer.bias is None and len(list(layer.parameters())) == 1
    check_module_gradients(layer, rng, randn(rng, 2, 1, 3, 4, requires_grad=True))


def test_conv2d_default_init_bound():
    tl.manual_seed(0)
    layer = nn.Conv2d(4, 16, 3)
    bound = 1 / math.sqrt(4 * 3 * 3)
    w, b = to_numpy(layer.weight), to_numpy(layer.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.abs(b).max() <= bound


def test_conv2d_rejects_wrong_channel_count_naming_both():
    layer = nn.Conv2d(1, 8, 3)
    with pytest.raises((ValueError, RuntimeError)) as info:
        layer(tensor(np.zeros((2, 3, 8, 8)), dtype=np.float32))
    assert_error_names(info, r"\b1\b", r"\b3\b", r"(?i)channel")


def test_conv2d_rejects_an_input_smaller_than_the_kernel():
    with pytest.raises((ValueError, RuntimeError)):
        nn.Conv2d(1, 1, 5)(tensor(np.zeros((1, 1, 3, 3)), dtype=np.float32))


# ----------------------------------------------------------------------------- pools


POOL_CASES = [
    # kernel, stride, padding, H, W
    (2, None, 0, 4, 6),
    (3, 1, 0, 5, 4),
    ((2, 3), (1, 2), 0, 5, 7),
    (3, 2, 1, 5, 5),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("k, s, p, h, w", POOL_CASES)
def test_pool_matches_loops_and_gradcheck(kind, k, s, p, h, w):
    rng = np.random.default_rng(19)
    x = rng.permutation(2 * 2 * h * w).reshape(2, 2, h, w) / 7.0  # distinct values: no max ties
    cls, func, reduce = (
        (nn.MaxPool2d, F.max_pool2d, np.max)
        if kind == "max"
        else (nn.AvgPool2d, F.avg_pool2d, np.mean)
    )
    layer = cls(k, stride=s, padding=p)
    stride = _pair(k) if s is None else _pair(s)
    if kind == "avg" and p:
        # PyTorch's default count_include_pad=True: padded zeros count in the average
        kh, kw = _pair(k)
        expected = pool2d_reference(
            x, _pair(k), stride, _pair(p), lambda a, axis: a.sum(axis=axis) / (kh * kw)
        )
    else:
        expected = pool2d_reference(x, _pair(k), stride, _pair(p), reduce)
    np.testing.assert_allclose(to_numpy(layer(tensor(x))), expected, rtol=1e-12)
    np.testing.assert_allclose(
        to_numpy(func(tensor(x), k, stride=s, padding=p)), expected, rtol=1e-12
    )
    check_gradients(layer, [tensor(x, requires_grad=True)], rng)


def test_max_pool_routes_gradient_to_the_maximum():
    x = tensor(np.array([[[[1.0, 5.0], [3.0, 2.0]]]]), requires_grad=True)
    nn.MaxPool2d(2)(x).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[[[0.0, 1.0], [0.0, 0.0]]]])


# ----------------------------------------------------------------------------- losses


def test_cross_entropy_and_nll():
    rng = np.random.default_rng(20)
    logits = rng.standard_normal((5, 4))
    target = np.array([0, 3, 1, 1, 2])
    logp = log_softmax_reference(logits)
    expected = -logp[np.arange(5), target].mean()
    got = nn.CrossEntropyLoss()(tensor(logits), ids_tensor(target))
    assert tuple(got.shape) == ()
    np.testing.assert_allclose(float(to_numpy(got)), expected, rtol=1e-12)
    np.testing.assert_allclose(
        float(to_numpy(F.cross_entropy(tensor(logits), ids_tensor(target)))), expected, rtol=1e-12
    )
    nll = nn.NLLLoss()(tensor(logp), ids_tensor(target))
    np.testing.assert_allclose(float(to_numpy(nll)), expected, rtol=1e-12)
    sum_loss = nn.CrossEntropyLoss(reduction="sum")(tensor(logits), ids_tensor(target))
    np.testing.assert_allclose(float(to_numpy(sum_loss)), 5 * expected, rtol=1e-12)
    check_gradients(
        lambda z: nn.CrossEntropyLoss()(z, ids_tensor(target)),
        [tensor(logits, requires_grad=True)],
        rng,
    )
    check_gradients(
        lambda z: nn.NLLLoss()(z, ids_tensor(target)), [tensor(logp, requires_grad=True)], rng
    )


def test_cross_entropy_is_stable_for_huge_logits():
    loss = nn.CrossEntropyLoss()(tensor([[1000.0, 0.0], [0.0, -1000.0]]), ids_tensor([0, 1]))
    np.testing.assert_allclose(float(to_numpy(loss)), 500.0, rtol=1e-12)


def test_mse_and_bce_with_logits():
    rng = np.random.default_rng(21)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    np.testing.assert_allclose(
        float(to_numpy(nn.MSELoss()(tensor(a), tensor(b)))), ((a - b) ** 2).mean(), rtol=1e-12
    )
    check_gradients(
        lambda u, v: nn.MSELoss()(u, v),
        [tensor(a, requires_grad=True), tensor(b, requires_grad=True)],
        rng,
    )
    y = (rng.random((3, 4)) > 0.5).astype(np.float64)
    z = a * 3
    expected = (np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))).mean()
    got = nn.BCEWithLogitsLoss()(tensor(z), tensor(y))
    np.testing.assert_allclose(float(to_numpy(got)), expected, rtol=1e-12)
    check_gradients(
        lambda u: nn.BCEWithLogitsLoss()(u, tensor(y)), [tensor(z, requires_grad=True)], rng
    )
    huge = nn.BCEWithLogitsLoss()(tensor([1000.0, -1000.0]), tensor([0.0, 1.0]))
    np.testing.assert_allclose(float(to_numpy(huge)), 1000.0, rtol=1e-12)


def test_cross_entropy_rejects_out_of_range_targets():
    with pytest.raises((IndexError, ValueError)) as info:
        nn.CrossEntropyLoss()(tensor(np.zeros((2, 3))), ids_tensor([0, 3]))
    assert_error_names(info, r"\b3\b")


def test_layers_are_float32_by_default_and_keep_float32():
    x = tensor(np.ones((2, 1, 5, 5)), dtype=np.float32)
    for layer in (
        nn.Conv2d(1, 2, 3),
        nn.Sequential(nn.Flatten(), nn.Linear(25, 3), nn.LayerNorm(3)),
    ):
        assert all(to_numpy(p).dtype == np.float32 for p in layer.parameters())
        assert to_numpy(layer(x)).dtype == np.float32


# ----------------------------------------------------------------------------- review fixes


@pytest.mark.parametrize("padding_idx", [5, 7, -6])
def test_embedding_functional_rejects_padding_idx_outside_the_table(padding_idx):
    weight = tensor(np.zeros((5, 3)))
    with pytest.raises(
        ValueError, match=r"padding_idx must be within num_embeddings.*got " + str(padding_idx)
    ):
        F.embedding(ids_tensor([1]), weight, padding_idx=padding_idx)
    with pytest.raises(ValueError, match=r"padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=padding_idx)


def test_embedding_functional_negative_padding_idx_counts_from_the_end():
    weight = tensor(np.ones((5, 3)), requires_grad=True)
    F.embedding(ids_tensor([4, 1, 4]), weight, padding_idx=-1).sum().backward()
    np.testing.assert_array_equal(to_numpy(weight.grad).sum(axis=1), [0.0, 3.0, 0.0, 0.0, 0.0])


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
@pytest.mark.parametrize("in_features, out_features", [(0, 4), (3, 0), (0, 0)])
def test_zero_size_linear_forward_and_backward(in_features, out_features):
    layer = make(nn.Linear, in_features, out_features)
    x = randn(np.random.default_rng(0), 2, 3, in_features, requires_grad=True)
    y = layer(x)
    assert tuple(y.shape) == (2, 3, out_features)
    y.sum().backward()
    assert tuple(x.grad.shape) == (2, 3, in_features)
    assert tuple(layer.weight.grad.shape) == (out_features, in_features)
    # with no inputs the output is the bias, so each bias entry sums 6 ones
    np.testing.assert_array_equal(to_numpy(layer.bias.grad), np.full(out_features, 6.0))


@pytest.mark.parametrize(
    "cls, args",
    [
        (nn.Linear, (2, 3)),
        (nn.Embedding, (4, 2)),
        (nn.PositionalEmbedding, (4, 2)),
        (nn.LayerNorm, (3,)),
        (nn.RMSNorm, (3,)),
        (nn.Conv2d, (1, 2, 3)),
        (nn.MLP, (2, [3], 1)),
    ],
)
def test_layer_constructors_take_device_cpu_only(cls, args):
    for device in (None, "cpu", tl.device("cpu")):
        layer = cls(*args, device=device, dtype=tl.float64)
        assert all(p.dtype == np.float64 for p in layer.parameters())
    with pytest.raises(ValueError, match=r"tensorlib runs on the CPU only, got device 'cuda'"):
        cls(*args, device="cuda")


def _conv_reference(x, weight, bias, top_left, bottom_right):
    """conv2d of numpy arrays with explicit (possibly uneven) zero padding, stride 1."""
    (t, l), (b, r) = top_left, bottom_right
    padded = np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)))
    o, c, kh, kw = weight.shape
    oh, ow = padded.shape[2] - kh + 1, padded.shape[3] - kw + 1
    out = np.empty((x.shape[0], o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = (
                np.einsum("ncuv,ocuv->no", padded[:, :, i : i + kh, j : j + kw], weight) + bias
            )
    return out


@pytest.mark.parametrize("kernel", [3, 4, (2, 5)])
def test_conv2d_padding_same_keeps_the_size_and_pads_the_extra_zero_after(kernel):
    rng = np.random.default_rng(3)
    kh, kw = _pair(kernel)
    x = rng.standard_normal((2, 2, 5, 6))
    layer = make(nn.Conv2d, 2, 3, kernel, padding="same")
    weight, bias = to_numpy(layer.weight), to_numpy(layer.bias)
    y = layer(tensor(x))
    assert tuple(y.shape) == (2, 3, 5, 6)
    expected = _conv_reference(x, weight, bias, ((kh - 1) // 2, (kw - 1) // 2), (kh // 2, kw // 2))
    np.testing.assert_allclose(to_numpy(y), expected, rtol=1e-12, atol=1e-12)
    check_gradients(layer, [tensor(x, requires_grad=True)], rng)
    valid = make(nn.Conv2d, 2, 3, kernel, padding="valid")
    assert tuple(valid(tensor(x)).shape) == (2, 3, 6 - kh, 7 - kw)


def test_conv2d_padding_strings_are_validated():
    with pytest.raises(
        ValueError, match=r"padding='same' is not supported for strided convolutions"
    ):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(
        ValueError, match=r"invalid padding string 'full', should be one of 'valid', 'same'"
    ):
        nn.Conv2d(1, 1, 3, padding="full")
    with pytest.raises(ValueError, match=r"strided"):
        F.conv2d(
            tensor(np.zeros((1, 1, 4, 4))), tensor(np.zeros((1, 1, 3, 3))), stride=2, padding="same"
        )


@pytest.mark.parametrize(
    "layer",
    [
        lambda: make(nn.Conv2d, 2, 3, 3, padding=1),
        lambda: nn.MaxPool2d(2),
        lambda: nn.AvgPool2d(3, 2, 1),
        lambda: nn.MaxPool2d(2, ceil_mode=True),
    ],
    ids=["conv", "max", "avg", "max-ceil"],
)
def test_unbatched_input_gives_the_batch_of_one_result(layer):
    module = layer()
    rng = np.random.default_rng(4)
    x = rng.permutation(2 * 5 * 5).reshape(2, 5, 5) / 7.0
    batched = module(tensor(x[None]))
    unbatched = module(tensor(x))
    assert tuple(unbatched.shape) == tuple(batched.shape)[1:]
    np.testing.assert_allclose(to_numpy(unbatched), to_numpy(batched)[0], rtol=1e-12, atol=1e-12)
    check_gradients(module, [tensor(x, requires_grad=True)], rng)


@pytest.mark.parametrize("k, s, p, h", [(2, 2, 0, 5), (3, 2, 1, 6), (3, 3, 0, 7), (2, 1, 1, 4)])
@pytest.mark.parametrize("kind", ["max", "avg", "avg-exclude"])
def test_pool_ceil_mode_output_size_and_gradcheck(kind, k, s, p, h):
    rng = np.random.default_rng(5)
    x = rng.permutation(2 * h * (h + 1)).reshape(1, 2, h, h + 1) / 7.0
    if kind == "max":
        layer = nn.MaxPool2d(k, s, p, ceil_mode=True)
    else:
        layer = nn.AvgPool2d(k, s, p, ceil_mode=True, count_include_pad=(kind == "avg"))
    y = layer(tensor(x))
    for size, out in zip((h, h + 1), y.shape[2:], strict=True):
        expected = -(-(size + 2 * p - k) // s) + 1
        # the last window must start inside the input or left padding
        if (expected - 1) * s >= size + p:
            expected -= 1
        assert out == expected
    check_gradients(layer, [tensor(x, requires_grad=True)], rng)


@pytest.mark.parametrize("call", [
    lambda x: F.rms_norm(x, 4), lambda x: F.layer_norm(x, 4), lambda x: F.max_pool2d(x, 2),
    lambda x: F.avg_pool2d(x, 2), lambda x: F.dropout(x, 0.5),
], ids=["rms_norm", "layer_norm", "max_pool2d", "avg_pool2d", "dropout"])
def test_float_only_layers_reject_integer_input_naming_the_dtype(call):
    x = tl.tensor(np.arange(16, dtype=np.int64).reshape(1, 1, 4, 4))
    with pytest.raises(TypeError, match=r"expected a floating-point input, got dtype int64"):
        call(x)


def test_normalized_shape_is_validated_the_same_way_by_function_and_module():
    x = tensor(np.zeros((2, 3)))
    for bad in (0, (), (3, -1), 2.5):
        with pytest.raises((TypeError, ValueError), match=r"normalized_shape"):
            F.layer_norm(x, bad)
    for bad in ((), (3, -1), 2.5):  # 0 is a size, as in PyTorch: LayerNorm(0) normalises (*, 0)
        with pytest.raises((TypeError, ValueError), match=r"normalized_shape"):
            nn.LayerNorm(bad)


def test_dropout_rejects_a_generator_of_the_wrong_type():
    with pytest.raises(TypeError, match=r"generator must be a tensorlib.Generator"):
        F.dropout(tensor(np.ones(4)), 0.5, generator=np.random.default_rng(0))


def test_loss_modules_use_the_functional_reduction_check():
    with pytest.raises(ValueError, match=r"reduction must be one of"):
        nn.MSELoss(reduction="avg")


# ----------------------------------------------------------------------------- pad and one_hot


def pad_reference(x, widths, value=0.0):
    """torch's constant pad by definition: widths from the last dimension, negative crops."""
    count = len(widths) // 2
    sides = [(0, 0)] * (x.ndim - count) + [
        (widths[2 * i], widths[2 * i + 1]) for i in range(count)
    ][::-1]
    out_shape = tuple(n + a + b for n, (a, b) in zip(x.shape, sides, strict=True))
    out = np.full(out_shape, value, dtype=x.dtype)
    for index in np.ndindex(x.shape):
        target = tuple(i + a for i, (a, _) in zip(index, sides, strict=True))
        if all(0 <= t < n for t, n in zip(target, out_shape, strict=True)):
            out[target] = x[index]
    return out


PAD_CASES = [
    ((3, 4), (1, 2)),
    ((2, 3, 4), (1, 2, 0, 1)),
    ((2, 3, 4), (0, 0, 2, 0, 1, 1)),
    ((2, 3, 4), (-1, 2, 1, -2)),
    ((5,), (-2, -3)),
    ((1, 2, 3, 4), (1, 1, 1, 1)),
    ((2, 0, 3), (1, 0, 2, 1)),
]


@pytest.mark.parametrize("shape, widths", PAD_CASES)
def test_pad_matches_the_definition_and_gradchecks(shape, widths):
    rng = np.random.default_rng(31)
    x = randn(rng, *shape, requires_grad=True)
    out = F.pad(x, widths, value=-2.5)
    np.testing.assert_array_equal(to_numpy(out), pad_reference(to_numpy(x), widths, -2.5))
    check_gradients(lambda x: F.pad(x, widths), [x], rng)


def test_pad_gradient_is_the_upstream_gradient_cropped():
    x = tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    upstream = np.arange(5 * 7.0).reshape(5, 7)
    F.pad(x, (2, 1, 1, 1)).backward(tensor(upstream))
    np.testing.assert_array_equal(to_numpy(x.grad), upstream[1:4, 2:6])


def test_pad_keeps_the_dtype_and_defaults_value_to_zero():
    out = F.pad(tl.tensor(np.ones((2, 2), dtype=np.float32)), (1, 1))
    assert out.dtype == np.float32 and to_numpy(out).sum() == 4 and to_numpy(out)[0, 0] == 0
    ids = F.pad(ids_tensor([[1, 2]]), (0, 2), value=7)
    assert ids.dtype == np.int64
    np.testing.assert_array_equal(to_numpy(ids), [[1, 2, 7, 7]])


@pytest.mark.parametrize(
    "widths, error, fragment",
    [
        (
            (1,),
            ValueError,
            "expected an even number of widths, at most 2 per dimension (4 for an input "
            "of shape (2, 3)), got 1",
        ),
        (
            (1, 1, 1, 1, 1, 1),
            ValueError,
            "at most 2 per dimension (4 for an input of shape (2, 3)), got 6",
        ),
        ((1.5, 1), TypeError, "pad: the widths must be ints, got (1.5, 1)"),
        (
            (-2, -2),
            ValueError,
            "dimension 1 of size 3 with widths (-2, -2) would have a negative size -1",
        ),
    ],
)
def test_pad_rejects_bad_widths(widths, error, fragment):
    with pytest.raises(error, match=re.escape(fragment)):
        F.pad(tensor(np.zeros((2, 3))), widths)


def test_pad_modes():
    x = tensor(np.arange(6.0).reshape(1, 2, 3))
    for mode, numpy_mode in (("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")):
        expected = np.pad(x.numpy(), ((0, 0), (0, 0), (2, 1)), mode=numpy_mode)
        np.testing.assert_array_equal(F.pad(x, (2, 1), mode=mode).numpy(), expected)
    with pytest.raises(ValueError, match=re.escape("pad: unknown mode 'mirror'")):
        F.pad(x, (1, 1), mode="mirror")


def test_one_hot_values_shape_and_dtype():
    ids = ids_tensor([[0, 2], [3, 2]])
    out = F.one_hot(ids, 5)
    assert tuple(out.shape) == (2, 2, 5) and out.dtype == np.int64 and not out.requires_grad
    np.testing.assert_array_equal(to_numpy(out), np.eye(5, dtype=np.int64)[to_numpy(ids)])
    assert tuple(F.one_hot(ids).shape) == (2, 2, 4)  # num_classes=-1: the largest id plus one
    assert tuple(F.one_hot(ids_tensor(np.zeros(0, dtype=np.int64)), 3).shape) == (0, 3)
    assert tuple(F.one_hot(ids_tensor(4), 6).shape) == (6,)


def test_one_hot_times_a_table_is_embedding():
    rng = np.random.default_rng(32)
    table = randn(rng, 6, 3)
    ids = ids_tensor([[1, 5, 1], [0, 0, 2]])
    by_product = to_numpy(F.one_hot(ids, 6)).astype(np.float64) @ to_numpy(table)
    np.testing.assert_allclose(by_product, to_numpy(F.embedding(ids, table)), rtol=0, atol=0)


@pytest.mark.parametrize("ids, num_classes, error, fragment", [
    ([0.0, 1.0], 3, TypeError, "one_hot: class ids must be an integer tensor, got dtype float64"),
    ([0, -1], 3, IndexError, "one_hot: class ids must be non-negative, got -1"),
    ([0, 3], 3, IndexError, "one_hot: class id 3 is out of range [0, 3) for num_classes=3"),
    ([0, 1], -2, ValueError, "one_hot: num_classes must be -1 (infer) or >= 0, got -2"),
    ([], -1, ValueError, "one_hot: cannot infer num_classes from an empty tensor"),
])
def test_one_hot_rejects_bad_input(ids, num_classes, error, fragment):
    data = np.asarray(ids, dtype=np.float64 if error is TypeError else np.int64)
    with pytest.raises(error, match=re.escape(fragment)):
        F.one_hot(tl.tensor(data), num_classes)


# ----------------------------------------------------------------------------- saved values changed
# in place


def _linear():
    return make(nn.Linear, 3, 2), (4, 3)


def _conv():
    return make(nn.Conv2d, 2, 3, 3, padding=1), (2, 2, 5, 5)


def _layer_norm():
    return make(nn.LayerNorm, 3), (4, 3)


def _rms_norm():
    return make(nn.RMSNorm, 3), (4, 3)


@pytest.mark.parametrize(
    "build, node, changed, x_needs_grad",
    [
        (_linear, "LinearBackward", "input", False),  # W̄ = Ȳᵀ X reads x
        (_linear, "LinearBackward", "weight", True),  # X̄ = Ȳ W reads W
        (_conv, "Conv2dBackward", "input", False),  # W̄ reads the im2col columns of x
        (_conv, "Conv2dBackward", "weight", True),  # X̄_col = W_matᵀ Ȳ_mat reads W
        (_layer_norm, "LayerNormBackward", "weight", True),  # x̄ reads γ
        (_rms_norm, "RMSNormBackward", "weight", True),
    ],
)
def test_changing_a_value_a_needed_gradient_reads_raises_naming_the_node(
    build, node, changed, x_needs_grad
):
    layer, shape = build()
    x = randn(np.random.default_rng(3), *shape, requires_grad=x_needs_grad)
    loss = layer(x).sum()
    with tl.no_grad():
        if changed == "weight":
            layer.weight -= 0.1
        else:
            x.add_(1.0)
    index = 1 if changed == "weight" else 0
    with pytest.raises(
        RuntimeError,
        match=rf"modified by an inplace operation: .*\(its input {index}\) saved for the backward "
              rf"of {node}",
    ):
        loss.backward()


@pytest.mark.parametrize("build", [_linear, _conv, _layer_norm, _rms_norm])
def test_changing_the_weight_of_a_layer_whose_input_needs_no_grad_keeps_the_recorded_gradients(
    build,
):
    """No needed gradient reads the weight (x needs none): backward gives the gradients of the
    forward as it ran."""
    layer, shape = build()
    x = randn(np.random.default_rng(3), *shape)
    layer(x).sum().backward()
    expected = {name: to_numpy(p.grad).copy() for name, p in layer.named_parameters()}
    layer.zero_grad()
    loss = layer(x).sum()
    with tl.no_grad():
        layer.weight -= 0.1
    loss.backward()
    for name, p in layer.named_parameters():
        np.testing.assert_array_equal(to_numpy(p.grad), expected[name], err_msg=name)


@pytest.mark.parametrize("pool", [
    lambda x: F.max_pool2d(x, 2),
    lambda x: F.avg_pool2d(x, 2, padding=1),
    lambda x: F.unfold(x, 2),
    lambda x: F.pad(x, (1, 2)),
    lambda x: F.dropout(x, 0.5, generator=tl.Generator().manual_seed(0)),
])
def test_ops_whose_backward_reads_no_input_allow_changing_it(pool):
    """Pooling keeps the argmax (or only shapes), pad and unfold only shapes, dropout its mask: x
    may change after forward."""
    rng = np.random.default_rng(4)
    x = randn(rng, 1, 2, 4, 4, requires_grad=True)
    cotangent = None
    grads = []
    for change in (False, True):
        x.grad = None
        out = pool(x)
        cotangent = (
            cotangent if cotangent is not None else tensor(rng.standard_normal(tuple(out.shape)))
        )
        loss = (out * cotangent).sum()
        if change:
            with tl.no_grad():
                x.mul_(-2.0)  # moves every max pooling winner
        loss.backward()
        grads.append(to_numpy(x.grad).copy())
    np.testing.assert_array_equal(grads[0], grads[1])


# ----------------------------------------------------------------------------- Convolution blocks
# The convolutions im2col a block of samples at a time (chapter 4, section 9.9); the module
# constants choose the blocks. Each setting below forces one path on small inputs.

_BLOCK_SETTINGS = {
    # one block of all the samples, one product per sample (the default for small inputs)
    "one-block": {},
    # a block per sample: the columns built again for the weight gradient
    "per-sample": {"_CONV_BLOCK_BYTES": 1},
    # blocks of samples joined side by side, two or three samples wide
    "joined": {"_CONV_BLOCK_BYTES": 1, "_CONV_JOIN_TAPS": 1, "_CONV_JOIN_POSITIONS": 10**6,
               "_CONV_MIN_COLUMNS": 40},
    # the whole batch joined into one product
    "joined-all": {"_CONV_JOIN_TAPS": 1, "_CONV_JOIN_POSITIONS": 10**6},
    # the whole batch joined, every odd sum longer than 2 cut in two (an even part and one
    # term): the forward's over the taps, the input gradient's over the output channels (or the
    # transposed convolution's over the input channels), the weight gradient's over positions
    "split-sum": {"_CONV_JOIN_TAPS": 1, "_CONV_JOIN_POSITIONS": 10**6, "_BLAS_SUM_ALIGN": 2,
                  "_BLAS_SUM_WHOLE": 2},
    # the same cuts with one product per sample (the forward's written in place, then added to)
    "split-sum-per-sample": {"_BLAS_SUM_ALIGN": 2, "_BLAS_SUM_WHOLE": 2},
    # a sum shorter than the cut's multiple: all of it in the second product, the first empty
    "split-sum-all-rest": {"_BLAS_SUM_ALIGN": 1000, "_BLAS_SUM_WHOLE": 2},
}

# (function, input shape, weight shape, keyword arguments)
_BLOCK_CASES = [
    ("conv2d", (5, 4, 7, 6), (6, 2, 3, 2), dict(stride=2, padding=1, groups=2)),
    ("conv2d", (4, 3, 9, 8), (4, 3, 3, 3), dict(padding=(2, 1), dilation=2)),
    ("conv2d", (3, 4, 6, 6), (4, 1, 3, 3), dict(padding="same", groups=4)),  # depthwise
    ("conv2d", (3, 6, 5, 5), (4, 6, 1, 1), {}),
    ("conv2d", (3, 6, 5, 5), (4, 3, 1, 1), dict(stride=2, groups=2)),  # 1x1 at stride 2: a copy
    ("conv1d", (4, 3, 17), (5, 3, 4), dict(stride=3, padding=2, dilation=2)),
    ("conv3d", (3, 2, 5, 4, 4), (4, 1, 2, 3, 2), dict(stride=(1, 2, 1), padding=1, groups=2)),
    ("conv_transpose2d", (4, 4, 5, 4), (4, 3, 3, 2),
     dict(stride=2, padding=1, output_padding=1, groups=2)),
    ("conv_transpose2d", (3, 3, 4, 4), (3, 1, 3, 3), dict(groups=3, dilation=2)),
    ("conv_transpose1d", (4, 3, 9), (3, 2, 3), dict(stride=2, padding=1)),
    ("conv_transpose3d", (3, 2, 3, 3, 4), (2, 2, 2, 2, 3), dict(stride=(2, 1, 2))),
]


@pytest.fixture(params=sorted(_BLOCK_SETTINGS))
def conv_blocks(request, monkeypatch):
    from tensorlib.nn.functional import layers

    for name, value in _BLOCK_SETTINGS[request.param].items():
        monkeypatch.setattr(layers, name, value)
    return request.param


@pytest.mark.parity
@pytest.mark.parametrize("what, x_shape, w_shape, options", _BLOCK_CASES)
def test_convolution_blocks_match_pytorch(conv_blocks, what, x_shape, w_shape, options):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(90)
    x_np, w_np = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    transposed = what.startswith("conv_transpose")
    b_np = rng.standard_normal(w_shape[1] * options.get("groups", 1) if transposed else w_shape[0])
    ours = [tensor(a, requires_grad=True) for a in (x_np, w_np, b_np)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x_np, w_np, b_np)]
    y = getattr(F, what)(*ours, **options)
    y_ref = getattr(torch.nn.functional, what)(*theirs, **options)
    cotangent = rng.standard_normal(tuple(y_ref.shape))
    y.backward(tensor(cotangent))
    y_ref.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(to_numpy(y), y_ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    for mine, reference, name in zip(ours, theirs, ("input", "weight", "bias"), strict=True):
        np.testing.assert_allclose(
            to_numpy(mine.grad), reference.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=name
        )


@pytest.mark.parametrize("what, x_shape, w_shape, options", _BLOCK_CASES[::2])
def test_convolution_blocks_gradcheck(conv_blocks, what, x_shape, w_shape, options):
    rng = np.random.default_rng(91)
    x = tensor(rng.standard_normal((2, *x_shape[1:])), requires_grad=True)
    w = tensor(rng.standard_normal(w_shape), requires_grad=True)
    assert gradcheck(lambda x, w: getattr(F, what)(x, w, None, **options), (x, w))


@pytest.mark.parity
def test_convolution_blocks_padding_modes_match_pytorch(conv_blocks):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(92)
    x_np = rng.standard_normal((3, 2, 6, 5))
    for mode in ("reflect", "replicate", "circular"):
        ours = make(nn.Conv2d, 2, 4, 3, padding=1, padding_mode=mode, dtype=tl.float64)
        theirs = torch.nn.Conv2d(2, 4, 3, padding=1, padding_mode=mode, dtype=torch.float64)
        with torch.no_grad():
            theirs.weight.copy_(torch.from_numpy(to_numpy(ours.weight)))
            theirs.bias.copy_(torch.from_numpy(to_numpy(ours.bias)))
        x, x_ref = tensor(x_np, requires_grad=True), torch.tensor(x_np, requires_grad=True)
        ours(x).sum().backward()
        theirs(x_ref).sum().backward()
        np.testing.assert_allclose(to_numpy(x.grad), x_ref.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(
            to_numpy(ours.weight.grad), theirs.weight.grad.numpy(), rtol=1e-10, atol=1e-12
        )


@pytest.mark.parametrize("x_shape, w_shape", [
    ((0, 3, 5, 5), (4, 3, 3, 3)),  # no samples
    ((2, 0, 5, 5), (4, 0, 3, 3)),  # no input channels: the bias alone
    ((2, 3, 5, 5), (0, 3, 3, 3)),  # no filters
    ((2, 3, 5, 5), (4, 3, 1, 1)),  # 1x1: the columns are a view of x
])
def test_convolution_blocks_of_empty_and_1x1_shapes(conv_blocks, x_shape, w_shape):
    rng = np.random.default_rng(95)
    x = tensor(rng.standard_normal(x_shape), requires_grad=True)
    w = tensor(rng.standard_normal(w_shape), requires_grad=True)
    b = tensor(rng.standard_normal(w_shape[0]), requires_grad=True)
    y = F.conv2d(x, w, b)
    x_np, w_np = to_numpy(x), to_numpy(w)
    expected = np.einsum("nchw,oc->nohw", x_np, w_np[:, :, 0, 0]) if w_shape[2] == 1 else None
    if expected is None:  # an empty sum: the bias alone (or nothing)
        expected = np.broadcast_to(to_numpy(b).reshape(1, -1, 1, 1), tuple(y.shape))
    else:
        expected = expected + to_numpy(b).reshape(1, -1, 1, 1)
    np.testing.assert_allclose(to_numpy(y), expected, rtol=1e-12, atol=1e-12)
    y.sum().backward()
    assert x.grad.shape == x.shape and w.grad.shape == w.shape and b.grad.shape == b.shape
    if x_shape[0] == 0 or w_shape[0] == 0:
        assert not np.abs(to_numpy(x.grad)).any() and not np.abs(to_numpy(w.grad)).any()


def test_convolution_blocking_follows_the_shapes():
    from tensorlib.nn.functional.layers import _blocking

    # (N, bytes of one sample's columns, taps per group, positions) -> (samples per block, joined)
    assert _blocking(16, 64 * 9 * 56 * 56 * 4, 64 * 9, 56 * 56) == (1, False)  # 3x3, 56x56
    assert _blocking(16, 512 * 9 * 49 * 4, 512 * 9, 49) == (16, True)  # 3x3 512, 7x7
    assert _blocking(64, 512 * 9 * 49 * 4, 512 * 9, 49) == (21, True)  # 21·49 >= 1024
    assert _blocking(16, 256 * 196 * 4, 256, 196) == (16, False)  # 1x1: taps < 512
    assert _blocking(32, 16 * 9 * 16 * 4, 16 * 9, 16) == (32, False)  # chapter 4's small CNN
    assert _blocking(0, 100, 10, 10) == (1, False)


def test_convolution_blocks_do_not_keep_all_the_columns():
    """A convolution of many blocks keeps only x for its backward and builds one block's columns
    at a time: the peak stays far below the whole im2col matrix."""
    import tracemalloc

    rng = np.random.default_rng(93)
    x = tensor(rng.standard_normal((8, 16, 48, 48)), requires_grad=True)
    w = tensor(rng.standard_normal((16, 16, 3, 3)), requires_grad=True)
    all_columns = 8 * 16 * 9 * 48 * 48 * 8  # bytes, float64
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        F.conv2d(x, w, padding=1).sum().backward()
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert peak < all_columns / 2, (peak, all_columns)


@pytest.mark.parametrize("what, x_shape, w_shape, options", [
    # 28x28 positions: the weight gradient's sum (784 long) is cut at 768
    ("conv2d", (2, 8, 28, 28), (16, 8, 3, 3), dict(padding=1)),
    # 900 taps: the forward's sum is cut at 896 (OpenBLAS: different bits at 1 and 2 threads)
    ("conv2d", (4, 100, 12, 12), (64, 100, 3, 3), dict(padding=1)),
    # 700 output channels: the input gradient's sum is cut at 672
    ("conv2d", (4, 8, 12, 12), (700, 8, 3, 3), dict(padding=1)),
    # groups of 60 channels (540 taps) and 500 filters, samples joined (taps >= 512)
    ("conv2d", (2, 120, 10, 10), (1000, 60, 3, 3), dict(padding=1, groups=2)),
    # the transposed convolution: its forward sums over 700 input channels, its backward over
    # 900 taps
    ("conv_transpose2d", (4, 700, 8, 8), (700, 100, 3, 3), dict(padding=1)),
])
def test_convolution_bits_do_not_depend_on_the_blas_thread_count(what, x_shape, w_shape, options):
    """float32: with OpenBLAS, float64 products differ at 1 and 2 threads whatever their length
    (chapter 4, section 9.9)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(94)
    x_np, w_np = rng.standard_normal(x_shape), rng.standard_normal(w_shape) * 0.05
    results = []
    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(threads):
            x = tensor(x_np, dtype=np.float32, requires_grad=True)
            w = tensor(w_np, dtype=np.float32, requires_grad=True)
            y = getattr(F, what)(x, w, **options)
            assert y.dtype == tl.float32
            cotangent = np.random.default_rng(95).standard_normal(tuple(y.shape))
            y.backward(tensor(cotangent, dtype=np.float32))
            results.append([to_numpy(y), to_numpy(x.grad), to_numpy(w.grad)])
    for one, two, name in zip(*results, ("y", "x.grad", "w.grad"), strict=True):
        assert np.array_equal(one, two), name


def _conv_and_memory_held(x, w):
    """``conv2d(x, w, padding=1)`` and the bytes it leaves allocated besides its output."""
    import tracemalloc

    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        y = F.conv2d(x, w, padding=1)
        return y, tracemalloc.get_traced_memory()[0] - start - to_numpy(y).nbytes
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("n, frozen", [(1, True), (1, False), (2, True)])
def test_convolution_keeps_no_large_columns_for_backward(n, frozen):
    """One block of the whole batch keeps its columns for the weight gradient only when they are
    small (at most _CONV_BLOCK_BYTES): a single large image keeps only x, also with a frozen
    weight, whose gradient would never read them."""
    rng = np.random.default_rng(96)
    x = tensor(rng.standard_normal((n, 16, 128, 128)).astype(np.float32), requires_grad=True)
    w = tensor(rng.standard_normal((16, 16, 3, 3)).astype(np.float32), requires_grad=not frozen)
    columns = n * 16 * 9 * 128 * 128 * 4  # bytes: 9 MiB a sample
    y, held = _conv_and_memory_held(x, w)
    assert held < columns / 8, (held, columns)
    y.sum().backward()  # the columns built again
    assert x.grad.shape == x.shape


def test_convolution_keeps_small_columns_for_backward():
    """A small batch in one block keeps its columns: the weight gradient does not build them
    again, and gives what a convolution of two blocks gives."""
    from tensorlib.nn.functional import layers

    rng = np.random.default_rng(97)
    x_np, w_np = rng.standard_normal((4, 8, 16, 16)), rng.standard_normal((8, 8, 3, 3))
    x, w = tensor(x_np, requires_grad=True), tensor(w_np, requires_grad=True)
    y, held = _conv_and_memory_held(x, w)
    assert held >= 4 * 8 * 9 * 16 * 16 * 8  # the columns, float64
    y.sum().backward()
    kept = to_numpy(w.grad).copy()
    w.grad = None
    saved = layers._CONV_BLOCK_BYTES
    layers._CONV_BLOCK_BYTES = 8 * 9 * 16 * 16 * 8 * 2  # two samples a block: nothing kept
    try:
        F.conv2d(x, w, padding=1).sum().backward()
    finally:
        layers._CONV_BLOCK_BYTES = saved
    np.testing.assert_allclose(to_numpy(w.grad), kept, rtol=1e-12, atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("norm", [
    lambda lib, x: lib.nn.functional.layer_norm(x, (4,)),
    lambda lib, x: lib.nn.functional.rms_norm(x, (4,)),
    lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True),
    lambda lib, x: lib.nn.functional.group_norm(x.reshape(3, 4, 1), 2),
    lambda lib, x: lib.nn.functional.instance_norm(x.reshape(3, 2, 2)),
], ids=["layer_norm", "rms_norm", "batch_norm", "group_norm", "instance_norm"])
def test_a_norm_without_affine_changed_in_place_keeps_its_gradient(norm):
    """Without weight and bias the output is x̂, which backward reads: changing the output in
    place must not change the gradient (PyTorch allows the change and gives the true gradient)."""
    torch = pytest.importorskip("torch")
    values = np.random.default_rng(4).standard_normal((3, 4))
    grads = []
    for lib in (tl, torch):
        x = lib.tensor(values, requires_grad=True)
        h = norm(lib, x)
        h.add_(lib.tensor(np.linspace(-1.0, 1.0, h.shape[-1])))
        weights = lib.arange(h.numel(), dtype=lib.float64).reshape(h.shape) + 1
        (h * h * weights).sum().backward()
        grads.append(np.asarray(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def _layer_norm_outputs(y):
    """(the LayerNorm node, its output tensor) found by walking ``y``'s graph back through
    ``node.inputs`` (the graph holds the parents themselves)."""
    seen, stack = set(), [y]
    while stack:
        t = stack.pop()
        node = t.grad_fn
        if node is None or id(t) in seen:
            continue
        seen.add(id(t))
        if type(node).__name__ == "LayerNormFunction":
            return node, t
        stack.extend(p for p in node.inputs if p is not None)
    raise AssertionError("no LayerNormFunction node in the graph")


@pytest.mark.parametrize("norm", ["group_norm", "instance_norm"])
@pytest.mark.parametrize("affine", ["weight", "bias", "both"])
def test_group_and_instance_norm_with_an_affine_do_not_copy_x_hat(norm, affine):
    """With a weight or a bias the per-channel affine makes the result: x̂, which nobody else
    sees, is fed to it as it is (no copy of a (N, C, *) array that is never handed out)."""
    x = tensor(np.random.default_rng(5).standard_normal((2, 4, 3)), requires_grad=True)
    w = tensor([1.0, 2.0, 3.0, 4.0]) if affine in ("weight", "both") else None
    b = tensor([0.5, 0.0, -0.5, 1.0]) if affine in ("bias", "both") else None
    if norm == "group_norm":
        y = F.group_norm(x, 2, w, b)
    else:
        y = F.instance_norm(x, weight=w, bias=b)
    node, normalised = _layer_norm_outputs(y)
    assert np.shares_memory(normalised._data, node.x_hat)
    assert not np.shares_memory(y._data, node.x_hat)


@pytest.mark.parametrize("norm", ["group_norm", "instance_norm", "layer_norm"])
def test_a_norm_without_affine_hands_out_a_copy_of_x_hat(norm):
    """Without weight and bias the result is x̂ itself, so it is a copy of what backward reads."""
    x = tensor(np.random.default_rng(6).standard_normal((2, 4, 3)), requires_grad=True)
    y = {"group_norm": lambda: F.group_norm(x, 2), "instance_norm": lambda: F.instance_norm(x),
         "layer_norm": lambda: F.layer_norm(x, (3,))}[norm]()
    node, normalised = _layer_norm_outputs(y)
    assert not np.shares_memory(normalised._data, node.x_hat)
    assert not np.shares_memory(y._data, node.x_hat)


@pytest.mark.parity
@pytest.mark.parametrize("norm", ["group_norm", "instance_norm"])
def test_group_and_instance_norm_with_an_affine_changed_in_place_match_torch(norm):
    """The affine's result changed in place, then backward: every gradient is PyTorch's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    values = rng.standard_normal((3, 4, 5))
    w_np, b_np = rng.standard_normal(4), rng.standard_normal(4)
    results = []
    for lib in (tl, torch):
        x, w, b = (lib.tensor(v, requires_grad=True) for v in (values, w_np, b_np))
        if norm == "group_norm":
            y = lib.nn.functional.group_norm(x, 2, w, b)
        else:
            y = lib.nn.functional.instance_norm(x, weight=w, bias=b)
        y.mul_(2)
        weights = lib.arange(y.numel(), dtype=lib.float64).reshape(y.shape) + 1
        (y * y * weights).sum().backward()
        results.append([np.asarray(t.detach()) for t in (y, x.grad, w.grad, b.grad)])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
