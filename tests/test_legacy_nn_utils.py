"""Chapter 4, section 11.8: nn.NLLLoss2d, nn.Container, nn.CrossMapLRN2d (PyTorch's legacy
windows and backward), nn.utils.spectral_norm / remove_spectral_norm (the hook form),
nn.utils.fuse_*_bn_*, nn.utils.skip_init, F.linear_cross_entropy and nn.LinearCrossEntropyLoss:
values and gradients against PyTorch, float64 gradchecks, and bad input."""

from __future__ import annotations

import dataclasses
import types
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd.gradcheck import GradcheckError

F = tl.nn.functional
nn = tl.nn
RNG = np.random.default_rng(21)


def _pair(torch, array: np.ndarray, grad: bool = True):
    return (tl.tensor(array, requires_grad=grad), torch.tensor(array, requires_grad=grad))


# ---------------------------------------------------------------- deprecated names


@pytest.mark.parity
def test_nll_loss_2d_warns_and_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        ours = nn.NLLLoss2d(ignore_index=1, reduction="sum")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.NLLLoss2d(ignore_index=1, reduction="sum")
    assert isinstance(ours, nn.NLLLoss)
    probabilities = RNG.dirichlet(np.ones(3), size=(2, 4, 5)).transpose(0, 3, 1, 2)
    scores = np.ascontiguousarray(np.log(probabilities))
    ids = RNG.integers(0, 3, (2, 4, 5))
    x, xt = _pair(torch, scores)
    ours(x, tl.tensor(ids)).backward()
    theirs(xt, torch.tensor(ids)).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_container_warns_and_registers_children() -> None:
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
        box = nn.Container(first=nn.Linear(2, 3), second=nn.ReLU())
    assert isinstance(box, nn.Module)
    assert [name for name, _ in box.named_children()] == ["first", "second"]
    assert sorted(box.state_dict()) == ["first.bias", "first.weight"]


# ---------------------------------------------------------------- CrossMapLRN2d


@pytest.mark.parity
@pytest.mark.parametrize("channels, size", [(5, 3), (5, 4), (7, 5), (3, 5), (6, 2), (8, 3)])
def test_cross_map_lrn_matches_torch_values_and_its_backward(channels, size) -> None:
    torch = pytest.importorskip("torch")
    data = RNG.standard_normal((2, channels, 3, 2))
    x, xt = _pair(torch, data)
    ours = nn.CrossMapLRN2d(size, 0.5, 0.75, 2.0)(x)
    theirs = torch.nn.CrossMapLRN2d(size, 0.5, 0.75, 2.0)(xt)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    upstream = RNG.standard_normal(data.shape)
    (ours * tl.tensor(upstream)).sum().backward()
    (theirs * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parity
def test_cross_map_lrn_float32_repr_and_errors() -> None:
    torch = pytest.importorskip("torch")
    data = RNG.standard_normal((1, 4, 2, 2)).astype(np.float32)
    ours = nn.CrossMapLRN2d(3)(tl.tensor(data))
    theirs = torch.nn.CrossMapLRN2d(3)(torch.tensor(data))
    assert ours.dtype == tl.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    assert repr(nn.CrossMapLRN2d(3, 0.5)) == repr(torch.nn.CrossMapLRN2d(3, 0.5))
    with pytest.raises(ValueError, match="Expected input to be 4D, got 3D instead"):
        nn.CrossMapLRN2d(3)(tl.ones(4, 2, 2))
    with pytest.raises(ValueError, match="Expected input to be 4D, got 3D instead"):
        torch.nn.CrossMapLRN2d(3)(torch.ones(4, 2, 2))


def test_cross_map_lrn_backward_is_pytorchs_not_the_exact_derivative() -> None:
    # PyTorch's hand-written backward gathers from channels c - o .. c + n - 1 - o, not from the
    # forward's windows: the gradient is PyTorch's (tested above), not the numerical one
    y = tl.tensor(RNG.standard_normal((1, 5, 2, 2)), requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        tl.autograd.gradcheck(lambda v: nn.CrossMapLRN2d(3, 0.5, 0.75, 2.0)(v), (y,))


# ---------------------------------------------------------------- spectral norm by hook


@pytest.mark.parity
@pytest.mark.parametrize("make, dim", [
    (lambda m: m.Linear(5, 4), None),
    (lambda m: m.Conv2d(2, 3, 3), None),
    (lambda m: m.ConvTranspose2d(3, 2, 2), None),
    (lambda m: m.Linear(5, 4), 1),
])
def test_spectral_norm_matches_torch_through_training_steps(make, dim) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.utils.spectral_norm(make(torch.nn).double(), n_power_iterations=2, dim=dim)
    ours = nn.utils.spectral_norm(make(nn).double(), n_power_iterations=2, dim=dim)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    assert sorted(n for n, _ in ours.named_parameters()) == sorted(
        n for n, _ in theirs.named_parameters())
    ours.load_state_dict({k: tl.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    optim_l = tl.optim.SGD(ours.parameters(), lr=0.1)
    optim_t = torch.optim.SGD(theirs.parameters(), lr=0.1)
    shape = (3, 5) if isinstance(theirs, torch.nn.Linear) else (2, theirs.in_channels, 5, 5)
    for _ in range(4):
        data = RNG.standard_normal(shape)
        loss_l = (ours(tl.tensor(data)) ** 2).sum()
        loss_t = (theirs(torch.tensor(data)) ** 2).sum()
        np.testing.assert_allclose(loss_l.item(), loss_t.item(), rtol=1e-10)
        optim_l.zero_grad()
        optim_t.zero_grad()
        loss_l.backward()
        loss_t.backward()
        np.testing.assert_allclose(ours.weight_orig.grad.numpy(),
                                   theirs.weight_orig.grad.numpy(), rtol=1e-8, atol=1e-12)
        optim_l.step()
        optim_t.step()
        for key in ("weight_orig", "weight_u", "weight_v"):
            np.testing.assert_allclose(getattr(ours, key).detach().numpy(),
                                       getattr(theirs, key).detach().numpy(), rtol=1e-8,
                                       atol=1e-12)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-8, atol=1e-12)
    # evaluation: no power iteration, the same weight
    ours.eval()
    theirs.eval()
    u_before = ours.weight_u.clone()
    data = RNG.standard_normal(shape)
    np.testing.assert_allclose(ours(tl.tensor(data)).detach().numpy(),
                               theirs(torch.tensor(data)).detach().numpy(), rtol=1e-8)
    np.testing.assert_array_equal(ours.weight_u.numpy(), u_before.numpy())
    torch.nn.utils.remove_spectral_norm(theirs)
    nn.utils.remove_spectral_norm(ours)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    assert isinstance(ours.weight, nn.Parameter)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-8, atol=1e-12)


def test_spectral_norm_estimates_the_largest_singular_value() -> None:
    tl.manual_seed(1)
    layer = nn.utils.spectral_norm(nn.Linear(8, 6, dtype=tl.float64))
    for _ in range(60):
        layer(tl.ones(1, 8, dtype=tl.float64))
    top = np.linalg.svd(layer.weight.detach().numpy(), compute_uv=False)[0]
    assert abs(top - 1.0) < 1e-6


def test_spectral_norm_gradcheck() -> None:
    tl.manual_seed(2)
    layer = nn.utils.spectral_norm(nn.Conv1d(2, 3, 2, dtype=tl.float64))
    hook = next(iter(layer._forward_pre_hooks.values()))
    u, v = layer.weight_u, layer.weight_v

    def normalised(weight):
        owner = types.SimpleNamespace(weight_orig=weight, weight_u=u, weight_v=v)
        return hook.compute_weight(owner, do_power_iteration=False)

    weight = tl.tensor(layer.weight_orig.detach().numpy(), requires_grad=True)
    assert tl.autograd.gradcheck(normalised, (weight,))


def test_spectral_norm_errors() -> None:
    layer = nn.utils.spectral_norm(nn.Linear(3, 2))
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(layer)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        nn.utils.spectral_norm(nn.Linear(3, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match="spectral_norm of 'bias' not found in"):
        nn.utils.remove_spectral_norm(layer, "bias")
    with pytest.raises(ValueError, match="can't have uninitialized parameters"):
        nn.utils.spectral_norm(nn.LazyLinear(3))
    nn.utils.remove_spectral_norm(layer)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        nn.utils.remove_spectral_norm(layer)


# ---------------------------------------------------------------- fusion and skip_init


def _copy_module(ours, theirs) -> None:
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["Conv1d", "Conv2d", "ConvTranspose2d", "Conv3d"])
def test_fuse_conv_bn_eval_matches_torch(kind) -> None:
    torch = pytest.importorskip("torch")
    transpose = kind.startswith("ConvTranspose")
    dims = int(kind[-2])
    norm = f"BatchNorm{dims}d"
    conv_t = getattr(torch.nn, kind)(2, 4, 3).double().eval()
    bn_t = getattr(torch.nn, norm)(4).double().eval()
    with torch.no_grad():
        bn_t.running_mean.copy_(torch.randn(4))
        bn_t.running_var.copy_(torch.rand(4) + 0.5)
        bn_t.weight.copy_(torch.randn(4))
        bn_t.bias.copy_(torch.randn(4))
    conv_l = getattr(nn, kind)(2, 4, 3, dtype=tl.float64).eval()
    bn_l = getattr(nn, norm)(4, dtype=tl.float64).eval()
    _copy_module(conv_l, conv_t)
    _copy_module(bn_l, bn_t)
    fused_t = torch.nn.utils.fuse_conv_bn_eval(conv_t, bn_t, transpose)
    fused_l = nn.utils.fuse_conv_bn_eval(conv_l, bn_l, transpose)
    assert type(fused_l) is type(conv_l) and fused_l is not conv_l
    np.testing.assert_allclose(fused_l.weight.detach().numpy(), fused_t.weight.detach().numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(fused_l.bias.detach().numpy(), fused_t.bias.detach().numpy(),
                               rtol=1e-12)
    data = RNG.standard_normal((2, 2) + (5,) * dims)
    np.testing.assert_allclose(fused_l(tl.tensor(data)).detach().numpy(),
                               bn_l(conv_l(tl.tensor(data))).detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    assert fused_l.weight.requires_grad and fused_l.weight.grad_fn is None


@pytest.mark.parity
def test_fuse_weights_without_bias_or_affine() -> None:
    torch = pytest.importorskip("torch")
    w, b = RNG.standard_normal((4, 3, 2)), None
    rm, rv = RNG.standard_normal(4), RNG.uniform(0.5, 1.5, 4)
    ours = nn.utils.fuse_conv_bn_weights(tl.tensor(w), None, tl.tensor(rm), tl.tensor(rv), 1e-3,
                                         None, None)
    theirs = torch.nn.utils.fuse_conv_bn_weights(torch.tensor(w), b, torch.tensor(rm),
                                                 torch.tensor(rv), 1e-3, None, None)
    for a, c in zip(ours, theirs, strict=True):
        assert isinstance(a, nn.Parameter)
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-12)
        assert a.requires_grad == c.requires_grad


@pytest.mark.parity
@pytest.mark.parametrize("features", [3, 1])
def test_fuse_linear_bn_eval_matches_torch(features) -> None:
    torch = pytest.importorskip("torch")
    lin_t = torch.nn.Linear(5, 3).double().eval()
    bn_t = torch.nn.BatchNorm1d(features).double().eval()
    with torch.no_grad():
        bn_t.running_mean.copy_(torch.randn(features))
        bn_t.running_var.copy_(torch.rand(features) + 0.5)
        bn_t.weight.copy_(torch.randn(features))
    lin_l = nn.Linear(5, 3, dtype=tl.float64).eval()
    bn_l = nn.BatchNorm1d(features, dtype=tl.float64).eval()
    _copy_module(lin_l, lin_t)
    _copy_module(bn_l, bn_t)
    fused_t = torch.nn.utils.fuse_linear_bn_eval(lin_t, bn_t)
    fused_l = nn.utils.fuse_linear_bn_eval(lin_l, bn_l)
    np.testing.assert_allclose(fused_l.weight.detach().numpy(), fused_t.weight.detach().numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(fused_l.bias.detach().numpy(), fused_t.bias.detach().numpy(),
                               rtol=1e-12)


def test_fusion_errors() -> None:
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2).eval())
    with pytest.raises(AssertionError, match="bn.running_mean and bn.running_var"):
        nn.utils.fuse_conv_bn_eval(nn.Conv2d(1, 2, 1).eval(),
                                   nn.BatchNorm2d(2, track_running_stats=False).eval())
    with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
        nn.utils.fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(2).eval())


def test_skip_init() -> None:
    layer = nn.utils.skip_init(nn.Linear, 4, 3, bias=False)
    assert type(layer) is nn.Linear and tuple(layer.weight.shape) == (3, 4)
    assert layer.bias is None and layer.weight.requires_grad
    layer = nn.utils.skip_init(nn.Conv2d, 2, 3, 3, device="cpu")
    assert tuple(layer.weight.shape) == (3, 2, 3, 3)
    with pytest.raises(RuntimeError, match="Expected a Module; got"):
        nn.utils.skip_init(int)

    class NoDevice(nn.Module):
        def __init__(self, size: int) -> None:
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        nn.utils.skip_init(NoDevice, 3)


# ---------------------------------------------------------------- linear_cross_entropy


LCE_CASES = [
    # (input shape, weight shape, target kind, bias, keyword options)
    ((6, 4), (5, 4), "ids", False, {}),
    ((6, 4), (5, 4), "ids", True, {"reduction": "sum", "label_smoothing": 0.2}),
    ((6, 4), (5, 4), "ids", False, {"reduction": "none", "ignore_index": 2}),
    ((6, 4), (5, 4), "probs", True, {}),
    ((4,), (5, 4), "ids", True, {}),
    ((6, 4), (5, 3, 4), "ids", True, {"reduction": "mean"}),
    ((6, 4), (5, 2, 3, 4), "ids", False, {"reduction": "none"}),
    ((6, 4), (5, 4), "ids", False, {"weight": True}),
]


@pytest.mark.parity
@pytest.mark.parametrize("x_shape, w_shape, kind, bias, options", LCE_CASES)
def test_linear_cross_entropy_matches_torch(x_shape, w_shape, kind, bias, options) -> None:
    torch = pytest.importorskip("torch")
    data, weight = RNG.standard_normal(x_shape), RNG.standard_normal(w_shape)
    batch, out = x_shape[:-1], w_shape[1:-1]
    if kind == "ids":
        target = RNG.integers(0, w_shape[0], batch + out)
    else:
        target = RNG.dirichlet(np.ones(w_shape[0]), size=batch)
    bias_a = RNG.standard_normal(w_shape[:-1]) if bias else None
    class_w = RNG.uniform(0.5, 2, w_shape[0]) if options.pop("weight", False) else None
    leaves_l = [tl.tensor(a, requires_grad=True) for a in (data, weight)]
    leaves_t = [torch.tensor(a, requires_grad=True) for a in (data, weight)]
    bias_l = None if bias_a is None else tl.tensor(bias_a, requires_grad=True)
    bias_t = None if bias_a is None else torch.tensor(bias_a, requires_grad=True)
    ours = F.linear_cross_entropy(*leaves_l, tl.tensor(target), linear_bias=bias_l,
                                  weight=None if class_w is None else tl.tensor(class_w),
                                  **options)
    theirs = torch.nn.functional.linear_cross_entropy(
        *leaves_t, torch.tensor(target), linear_bias=bias_t,
        weight=None if class_w is None else torch.tensor(class_w), **options)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)
    upstream = RNG.standard_normal(tuple(theirs.shape))
    (ours * tl.tensor(upstream)).sum().backward()
    (theirs * torch.tensor(upstream)).sum().backward()
    for a, b in zip(leaves_l + [bias_l], leaves_t + [bias_t], strict=True):
        if a is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-8, atol=1e-12)


def test_linear_cross_entropy_gradcheck() -> None:
    x, w = tl.randn(3, 4, dtype=tl.float64, requires_grad=True), tl.randn(5, 4,
                                                                          dtype=tl.float64,
                                                                          requires_grad=True)
    b = tl.randn(5, dtype=tl.float64, requires_grad=True)
    y = tl.tensor([0, 4, 2])
    assert tl.autograd.gradcheck(
        lambda a, c, d: F.linear_cross_entropy(a, c, y, linear_bias=d, label_smoothing=0.1),
        (x, w, b))


@pytest.mark.parity
def test_linear_cross_entropy_errors_like_torch() -> None:
    torch = pytest.importorskip("torch")
    cases = [
        ((2, 3, 4), (5, 4), None, "expected input with dimensionality 1 or 2"),
        ((2, 4), (4,), None, "expected linear_weight with dimensionality at least 2"),
        ((2, 3), (5, 4), None, "expected equal input and linear_weight last dimensions"),
        ((2, 4), (5, 4), (4,), "expected linear_bias shape"),
        ((4,), (5, 2, 4), None, "requires batched input"),
    ]
    for x_shape, w_shape, b_shape, message in cases:
        target = np.zeros(x_shape[:1] if len(x_shape) == 2 else (), dtype=np.int64)
        for lib in (tl, torch):
            bias = None if b_shape is None else lib.zeros(b_shape)
            with pytest.raises(RuntimeError, match=message):
                lib.nn.functional.linear_cross_entropy(
                    lib.zeros(x_shape), lib.zeros(w_shape), lib.tensor(target), linear_bias=bias)
    probs = tl.full((2, 5), 0.2)
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified"):
        F.linear_cross_entropy(tl.zeros(2, 4), tl.zeros(5, 4), probs, ignore_index=1)


@pytest.mark.parity
def test_linear_cross_entropy_loss_module_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    for kwargs in [{}, {"bias": True, "out_features": (3,), "label_smoothing": 0.1}]:
        theirs = torch.nn.LinearCrossEntropyLoss(4, 5, dtype=torch.float64, **kwargs)
        ours = nn.LinearCrossEntropyLoss(4, 5, dtype=tl.float64, **kwargs)
        assert repr(ours) == repr(theirs)
        assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
        _copy_module(ours, theirs)
        data = RNG.standard_normal((6, 4))
        target = RNG.integers(0, 5, (6,) + tuple(kwargs.get("out_features", ())))
        loss_l = ours(tl.tensor(data), tl.tensor(target))
        loss_t = theirs(torch.tensor(data), torch.tensor(target))
        np.testing.assert_allclose(loss_l.item(), loss_t.item(), rtol=1e-10)
        loss_l.backward()
        loss_t.backward()
        np.testing.assert_allclose(ours.linear.weight.grad.numpy(),
                                   theirs.linear.weight.grad.numpy(), rtol=1e-8, atol=1e-12)
    # options (the chunking strategy) are accepted and change nothing
    options = torch.nn.LinearCrossEntropyOptions()
    ours = nn.LinearCrossEntropyLoss(4, 5, options=options)
    assert ours.options is options
    ours(tl.randn(3, 4), tl.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="expected weight shape to be"):
        nn.LinearCrossEntropyLoss(4, 5, weight=tl.ones(4))
    with pytest.raises(RuntimeError, match="expected label_smoothing to be in range"):
        nn.LinearCrossEntropyLoss(4, 5, label_smoothing=1.5)


@pytest.mark.parity
def test_linear_cross_entropy_options_are_checked_like_torch() -> None:
    torch = pytest.importorskip("torch")
    for kwargs in [{"acc_policy": "fast"}, {"chunking_method": "rows"},
                   {"chunking_method": "aspect_ratio:0"}, {"batch_chunk_size": 0},
                   {"acc_dtype": "int"}]:
        with pytest.raises(ValueError) as theirs:
            torch.nn.LinearCrossEntropyOptions(**kwargs)
        message = str(theirs.value).split(",")[0].split(" got")[0]
        with pytest.raises(ValueError, match=message.replace("{", r"\{").replace(".", r"\.")):
            nn.LinearCrossEntropyOptions(**kwargs)
    fine = {"batch_chunk_size": 4, "chunking_method": "aspect_ratio:3", "acc_policy": "compact",
            "allow_retain_graph": True}
    ours = nn.LinearCrossEntropyOptions(**fine, acc_dtype=tl.float32)
    assert repr(torch.nn.LinearCrossEntropyOptions(**fine)).split("acc_dtype")[0] == repr(
        ours).split("acc_dtype")[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ours.batch_chunk_size = 2  # type: ignore[misc]
    x, w, y = tl.randn(3, 4), tl.randn(5, 4), tl.tensor([0, 4, 1])
    assert F.linear_cross_entropy(x, w, y, options=ours).item() == F.linear_cross_entropy(
        x, w, y).item()
