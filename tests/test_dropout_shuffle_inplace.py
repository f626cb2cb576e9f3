"""Chapter 4, sections 7 and 8.2: Dropout1d/3d, AlphaDropout, FeatureAlphaDropout, Softmax2d,
ChannelShuffle, gumbel_softmax and the in-place activation functions, against PyTorch
(float64 values and gradients where the op is deterministic; laws and masks where it draws)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

F = tl.nn.functional
nn = tl.nn
RNG = np.random.default_rng(3)
SATURATION = -1.7580993408473766


# --- channel dropout ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "function, shape",
    [(F.dropout1d, (3, 5, 7)), (F.dropout1d, (5, 7)), (F.dropout3d, (2, 4, 2, 3, 3)),
     (F.dropout3d, (4, 2, 3, 3))],
)
def test_channel_dropout_masks_whole_channels(function, shape) -> None:
    x = tl.tensor(RNG.standard_normal(shape) + 5.0, requires_grad=True)
    out = function(x, 0.4, generator=tl.Generator(2))
    scale = out.numpy() / x.detach().numpy()
    batched = scale if len(shape) in (3, 5) else scale[None]
    per_channel = batched.reshape(batched.shape[0], batched.shape[1], -1)
    assert np.all(np.isclose(per_channel, 0) | np.isclose(per_channel, 1 / 0.6))
    assert np.all(np.ptp(per_channel, axis=-1) < 1e-12)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), scale)
    again = function(x.detach(), 0.4, generator=tl.Generator(2))
    np.testing.assert_array_equal(again.numpy(), out.detach().numpy())
    assert function(x, 0.4, training=False) is x
    assert function(x, 0.0) is x


def test_channel_dropout_rate() -> None:
    out = F.dropout1d(tl.ones(400, 50, 3), 0.3, generator=tl.Generator(1)).numpy()
    assert abs((out[:, :, 0] == 0).mean() - 0.3) < 0.02


@pytest.mark.parity
def test_channel_dropout_scale_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.functional.dropout3d(torch.ones(4, 6, 2, 2, 2), 0.25).numpy()
    ours = F.dropout3d(tl.ones(4, 6, 2, 2, 2), 0.25, generator=tl.Generator(0)).numpy()
    assert set(np.unique(theirs)) == set(np.unique(ours)) == {0.0, np.float32(1 / 0.75)}


# --- alpha dropout --------------------------------------------------------------------------
def alpha_by_definition(x: np.ndarray, keep: np.ndarray, p: float) -> np.ndarray:
    a = ((1 - p) * (1 + p * SATURATION**2)) ** -0.5
    return a * (keep * x + (1 - keep) * SATURATION) - a * p * SATURATION


@pytest.mark.parity
@pytest.mark.parametrize("p", [0.1, 0.5])
@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_matches_torch_formula(p: float, feature: bool) -> None:
    torch = pytest.importorskip("torch")
    x_np = RNG.standard_normal((6, 5, 4))
    torch_fn = (torch.nn.functional.feature_alpha_dropout if feature
                else torch.nn.functional.alpha_dropout)
    ours_fn = F.feature_alpha_dropout if feature else F.alpha_dropout
    torch.manual_seed(1)
    theirs = torch_fn(torch.tensor(x_np), p, True).numpy()
    dropped_value = alpha_by_definition(np.zeros(1), np.zeros(1), p)[0]
    their_keep = (~np.isclose(theirs, dropped_value)).astype(float)
    np.testing.assert_allclose(theirs, alpha_by_definition(x_np, their_keep, p), atol=1e-12)
    x = tl.tensor(x_np, requires_grad=True)
    ours = ours_fn(x, p, True, generator=tl.Generator(4))
    keep = (~np.isclose(ours.detach().numpy(), dropped_value)).astype(float)
    np.testing.assert_allclose(ours.detach().numpy(), alpha_by_definition(x_np, keep, p),
                               atol=1e-12)
    if feature:
        assert np.all(np.ptp(keep, axis=-1) == 0)
    ours.sum().backward()
    a = ((1 - p) * (1 + p * SATURATION**2)) ** -0.5
    np.testing.assert_allclose(x.grad.numpy(), a * keep, atol=1e-12)


def test_alpha_dropout_keeps_mean_and_variance() -> None:
    x = tl.randn(1000, 400, generator=tl.Generator(5), dtype=tl.float64)
    for p in (0.05, 0.3, 0.7):
        out = F.alpha_dropout(x, p, True, generator=tl.Generator(6)).numpy()
        assert abs(out.mean()) < 0.01 and abs(out.var() - 1) < 0.02


def test_alpha_dropout_defaults_and_gradcheck() -> None:
    x = tl.tensor(RNG.standard_normal((3, 4, 2)), requires_grad=True)
    assert F.alpha_dropout(x) is x and F.feature_alpha_dropout(x) is x  # training=False
    assert nn.AlphaDropout(0.3).eval()(x) is x
    assert tl.autograd.gradcheck(
        lambda t: F.alpha_dropout(t, 0.3, True, generator=tl.Generator(8)), (x,))
    assert tl.autograd.gradcheck(
        lambda t: F.feature_alpha_dropout(t, 0.3, True, generator=tl.Generator(8)), (x,))
    assert tl.autograd.gradcheck(
        lambda t: F.dropout1d(t, 0.3, generator=tl.Generator(8)), (x,))


@pytest.mark.parity
def test_modules_print_and_defaults_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for name in ("Dropout1d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        assert repr(getattr(nn, name)(0.25)) == repr(getattr(torch.nn, name)(0.25))
        assert repr(getattr(nn, name)(inplace=True)) == repr(getattr(torch.nn, name)(inplace=True))
    layer = nn.Dropout1d(0.5, generator=tl.Generator(0))
    assert layer.training and layer.eval()(tl.ones(2, 3)).numpy().min() == 1.0
    assert repr(nn.ChannelShuffle(3)) == repr(torch.nn.ChannelShuffle(3))
    assert repr(nn.Softmax2d()) == repr(torch.nn.Softmax2d())


def test_dropout_errors() -> None:
    with pytest.raises(RuntimeError, match="dropout1d: expected a 2-D"):
        F.dropout1d(tl.ones(2, 3, 4, 5))
    with pytest.warns(UserWarning, match="Received a 3-D input to dropout3d"):  # as PyTorch
        F.dropout3d(tl.ones(2, 3, 4))
    with pytest.raises(ValueError, match="p=1"):
        nn.AlphaDropout(1.0)
    with pytest.raises(ValueError, match="in \\[0, 1\\)"):
        F.feature_alpha_dropout(tl.ones(2, 3), -0.1, True)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        F.feature_alpha_dropout(tl.ones(3), 0.1, True)
    with pytest.raises(TypeError):
        F.alpha_dropout(tl.ones(3, dtype=tl.int64), 0.1, True)


# --- Softmax2d and channel shuffle -----------------------------------------------------------
@pytest.mark.parity
@pytest.mark.parametrize("shape", [(2, 4, 3, 5), (4, 3, 5)])
def test_softmax2d_matches_torch(shape) -> None:
    torch = pytest.importorskip("torch")
    x_np, w = RNG.standard_normal(shape), RNG.standard_normal(shape)
    x_t = torch.tensor(x_np, requires_grad=True)
    theirs = torch.nn.Softmax2d()(x_t)
    (theirs * torch.tensor(w)).sum().backward()
    x = tl.tensor(x_np, requires_grad=True)
    ours = nn.Softmax2d()(x)
    (ours * tl.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), x_t.grad.numpy(), rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="expected input to be 3D or 4D, got 2D"):
        nn.Softmax2d()(tl.ones(2, 3))


@pytest.mark.parity
@pytest.mark.parametrize("shape, groups", [((2, 6, 3), 2), ((2, 6, 3, 4), 3), ((1, 8, 2, 2, 2), 4),
                                           ((3, 5, 2), 5), ((3, 5, 2), 1)])
def test_channel_shuffle_matches_torch(shape, groups) -> None:
    torch = pytest.importorskip("torch")
    x_np, w = RNG.standard_normal(shape), RNG.standard_normal(shape)
    x_t = torch.tensor(x_np, requires_grad=True)
    theirs = torch.nn.functional.channel_shuffle(x_t, groups)
    (theirs * torch.tensor(w)).sum().backward()
    x = tl.tensor(x_np, requires_grad=True)
    ours = nn.ChannelShuffle(groups)(x)
    (ours * tl.tensor(w)).sum().backward()
    np.testing.assert_array_equal(ours.numpy(), theirs.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), x_t.grad.numpy())
    assert tl.autograd.gradcheck(lambda t: F.channel_shuffle(t, groups), (x,))


def test_channel_shuffle_errors() -> None:
    with pytest.raises(RuntimeError, match="divisible by groups. Got 5 channels and 2 groups"):
        F.channel_shuffle(tl.ones(2, 5, 3), 2)
    with pytest.raises(RuntimeError, match="must be positive"):
        F.channel_shuffle(tl.ones(2, 4, 3), 0)
    with pytest.raises(RuntimeError, match="> 2 dims"):
        F.channel_shuffle(tl.ones(2, 4), 2)


@pytest.mark.parity
@pytest.mark.parametrize("shape, groups", [((2, 6, 3), 2), ((2, 6, 3, 4), 3), ((3, 5, 2), 1)])
def test_native_channel_shuffle_matches_torch(shape, groups) -> None:
    torch = pytest.importorskip("torch")
    x_np = RNG.standard_normal(shape)
    theirs = torch.native_channel_shuffle(torch.tensor(x_np), groups)
    for ours in (F.native_channel_shuffle(tl.tensor(x_np), groups),
                 tl.native_channel_shuffle(tl.tensor(x_np), groups)):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for bad, message in [((2, 5, 3), "divisible by groups. Got 5 channels and 2 groups."),
                         ((2, 4), "> 2 dims, but got input with sizes \\[2, 4\\]")]:
        with pytest.raises(RuntimeError, match=message):
            F.native_channel_shuffle(tl.ones(*bad), 2)
        with pytest.raises(RuntimeError, match=message):
            torch.native_channel_shuffle(torch.ones(*bad), 2)
    with pytest.raises(RuntimeError, match="must be positive. Value of groups:0"):
        F.native_channel_shuffle(tl.ones(2, 4, 3), 0)


def test_native_channel_shuffle_has_channel_shuffles_gradient() -> None:
    # PyTorch's native_channel_shuffle has no derivative; ours is a superset (section 8.2)
    x = tl.tensor(RNG.standard_normal((2, 6, 3)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: F.native_channel_shuffle(t, 3), (x,))


# --- gumbel_softmax ------------------------------------------------------------------------
def test_gumbel_softmax_law() -> None:
    tl.manual_seed(0)
    logits = tl.tensor([[1.0, 0.0, -1.0, 2.0]], dtype=tl.float64)
    probabilities = np.exp(logits.numpy()[0]) / np.exp(logits.numpy()[0]).sum()
    hard = F.gumbel_softmax(logits.expand(40000, 4), tau=0.3, hard=True).numpy()
    assert np.all((hard == 0) | (hard == 1)) and np.all(hard.sum(1) == 1)
    np.testing.assert_allclose(hard.mean(0), probabilities, atol=0.01)
    soft = F.gumbel_softmax(logits.expand(2000, 4), tau=2.0).numpy()
    np.testing.assert_allclose(soft.sum(1), 1.0)
    assert np.all(soft > 0)
    # the argmax of a soft sample is the Gumbel-max sample: the same law
    np.testing.assert_allclose(np.bincount(soft.argmax(1), minlength=4) / 2000, probabilities,
                               atol=0.03)


def test_gumbel_softmax_is_reproducible_and_uses_dim() -> None:
    logits = tl.tensor(RNG.standard_normal((3, 5, 2)))
    tl.manual_seed(4)
    first = F.gumbel_softmax(logits, dim=1).numpy()
    tl.manual_seed(4)
    np.testing.assert_array_equal(F.gumbel_softmax(logits, dim=1).numpy(), first)
    np.testing.assert_allclose(first.sum(1), 1.0)
    tl.manual_seed(4)
    hard = F.gumbel_softmax(logits, dim=1, hard=True).numpy()
    np.testing.assert_array_equal(hard, (first == first.max(1, keepdims=True)).astype(float))
    assert F.gumbel_softmax(tl.ones(2, 3)).dtype == tl.float32


def test_gumbel_softmax_straight_through_gradient() -> None:
    logits = tl.tensor(RNG.standard_normal((4, 6)), requires_grad=True)
    weights = tl.tensor(RNG.standard_normal((4, 6)))
    tl.manual_seed(9)
    (F.gumbel_softmax(logits, tau=0.8, hard=True) * weights).sum().backward()
    hard_grad = logits.grad.numpy().copy()
    logits.grad = None
    tl.manual_seed(9)
    (F.gumbel_softmax(logits, tau=0.8) * weights).sum().backward()
    np.testing.assert_allclose(hard_grad, logits.grad.numpy(), rtol=1e-12, atol=1e-14)

    def fixed_noise(z: tl.Tensor) -> tl.Tensor:
        tl.manual_seed(11)
        return F.gumbel_softmax(z, tau=0.5)

    assert tl.autograd.gradcheck(fixed_noise, (logits,))


def test_gumbel_softmax_eps_warns_and_errors() -> None:
    with pytest.warns(UserWarning, match="eps"):
        F.gumbel_softmax(tl.ones(2, 3), eps=1e-5)
    with pytest.raises(TypeError):
        F.gumbel_softmax(tl.ones(2, 3, dtype=tl.int64))


# --- in-place activations ------------------------------------------------------------------
IN_PLACE = [
    ("relu_", (), {}),
    ("elu_", (0.7,), {}),
    ("leaky_relu_", (0.2,), {}),
    ("hardtanh_", (-0.5, 0.8), {}),
    ("threshold_", (0.1, 7.0), {}),
    ("celu_", (1.5,), {}),
    ("selu_", (), {}),
    ("rrelu_", (0.1, 0.3), {}),
]


@pytest.mark.parity
@pytest.mark.parametrize("name, args, kwargs", IN_PLACE)
def test_in_place_matches_torch(name: str, args: tuple, kwargs: dict) -> None:
    torch = pytest.importorskip("torch")
    x_np = RNG.standard_normal((3, 4)) * 2
    target = tl.tensor(x_np)
    result = getattr(F, name)(target, *args, **kwargs)
    assert result is target
    theirs = torch.tensor(x_np)
    getattr(torch.nn.functional, name)(theirs, *args, **kwargs)
    np.testing.assert_allclose(target.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)
    assert target._version == 1
    # a leaf that requires grad: refused by both
    for module, make in ((F, tl.tensor), (torch.nn.functional, torch.tensor)):
        leaf = make(x_np, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            getattr(module, name)(leaf, *args, **kwargs)
    # under no_grad both write into the leaf
    leaf = tl.tensor(x_np, requires_grad=True)
    with tl.no_grad():
        getattr(F, name)(leaf, *args, **kwargs)
    np.testing.assert_allclose(leaf.detach().numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_in_place_inside_the_graph_is_recorded() -> None:
    x = tl.tensor(RNG.standard_normal(4), requires_grad=True)
    y = x * 2
    F.elu_(y).sum().backward()
    x2 = tl.tensor(x.detach().numpy(), requires_grad=True)
    F.elu(x2 * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), x2.grad.numpy())


def test_in_place_errors() -> None:
    with pytest.raises(RuntimeError, match="can't be cast"):
        F.elu_(tl.ones(3, dtype=tl.int64))
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        F.rrelu_(tl.ones(3), 0.5, 0.1, training=True)  # PyTorch's check and message
    with pytest.raises(TypeError):
        F.relu_(np.ones(3))
