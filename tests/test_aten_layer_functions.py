"""Chapter 4, section 11.7: the layers' functions at top level with the signatures of PyTorch's
operators (tl.dropout, tl.batch_norm, tl.embedding, tl.kl_div, tl.conv_tbc, ...): float64
values and gradients against torch's same calls, float64 gradchecks, the random ones by their
structure, and bad input."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorlib as tl

F = tl.nn.functional
RNG = np.random.default_rng(11)


def _data(*shape: int, positive: bool = False) -> np.ndarray:
    values = RNG.standard_normal(shape)
    return np.abs(values) + 0.1 if positive else values


# name -> (arrays that get gradients, constant arrays or values, the call taking the module)
# each call is written once and run on both libraries: `m` is tensorlib or torch
CASES = {
    "conv_tbc": (
        [_data(7, 2, 3), _data(3, 3, 4), _data(4)], [],
        lambda m, x, w, b: m.conv_tbc(x, w, b, 1),
    ),
    "conv_tbc_no_pad": (
        [_data(5, 1, 2), _data(2, 2, 3), _data(3)], [],
        lambda m, x, w, b: m.conv_tbc(x, w, b),
    ),
    "max_pool1d": ([_data(2, 3, 9)], [], lambda m, x: m.max_pool1d(x, 3)),
    "max_pool1d_stride": ([_data(2, 3, 9)], [], lambda m, x: m.max_pool1d(x, 3, 2, 1, 1, True)),
    "max_pool2d": ([_data(1, 2, 6, 5)], [], lambda m, x: m.max_pool2d(x, 2, [], 1)),
    "max_pool3d": ([_data(1, 1, 4, 4, 4)], [], lambda m, x: m.max_pool3d(x, [2, 2, 2])),
    "max_pool1d_with_indices": (
        [_data(2, 3, 8)], [], lambda m, x: m.max_pool1d_with_indices(x, 2, 3),
    ),
    "adaptive_max_pool1d": ([_data(2, 3, 7)], [], lambda m, x: m.adaptive_max_pool1d(x, [3])),
    "avg_pool1d": ([_data(2, 3, 7)], [], lambda m, x: m.avg_pool1d(x, 3, 2, 1, True, False)),
    "adaptive_avg_pool1d": ([_data(2, 3, 7)], [], lambda m, x: m.adaptive_avg_pool1d(x, 4)),
    "batch_norm": (
        [_data(4, 3, 5), _data(3), _data(3)], [],
        lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
    ),
    "batch_norm_eval": (
        [_data(4, 3), _data(3), _data(3)], [_data(3), _data(3, positive=True)],
        lambda m, x, w, b, mean, var: m.batch_norm(x, w, b, mean, var, False, 0.1, 1e-3, True),
    ),
    "layer_norm": (
        [_data(3, 4, 5), _data(4, 5), _data(4, 5)], [],
        lambda m, x, w, b: m.layer_norm(x, [4, 5], w, b),
    ),
    "layer_norm_eps": ([_data(3, 6)], [], lambda m, x: m.layer_norm(x, [6], None, None, 1e-2)),
    "group_norm": (
        [_data(2, 6, 5), _data(6), _data(6)], [],
        lambda m, x, w, b: m.group_norm(x, 3, w, b, 1e-5, False),
    ),
    "instance_norm": (
        [_data(2, 3, 6), _data(3), _data(3)], [],
        lambda m, x, w, b: m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
    ),
    "rms_norm": ([_data(3, 5), _data(5)], [], lambda m, x, w: m.rms_norm(x, [5], w, 1e-6)),
    "embedding": (
        [_data(6, 3)], [np.array([[0, 5, 2], [2, 2, 1]])],
        lambda m, w, i: m.embedding(w, i),
    ),
    "embedding_padding": (
        [_data(6, 3)], [np.array([0, 5, 2, 2, 1])],
        lambda m, w, i: m.embedding(w, i, 2),
    ),
    "bilinear": (
        [_data(4, 3), _data(4, 2), _data(5, 3, 2), _data(5)], [],
        lambda m, a, b, w, c: m.bilinear(a, b, w, c),
    ),
    "pixel_shuffle": ([_data(1, 8, 2, 3)], [], lambda m, x: m.pixel_shuffle(x, 2)),
    "pixel_unshuffle": ([_data(1, 2, 4, 6)], [], lambda m, x: m.pixel_unshuffle(x, 2)),
    "channel_shuffle": ([_data(1, 6, 2, 2)], [], lambda m, x: m.channel_shuffle(x, 3)),
    "prelu": ([_data(2, 3, 4), _data(3)], [], lambda m, x, w: m.prelu(x, w)),
    "hardshrink": ([_data(3, 4)], [], lambda m, x: m.hardshrink(x, 0.3)),
    "selu": ([_data(3, 4)], [], lambda m, x: m.selu(x)),
    "celu": ([_data(3, 4)], [], lambda m, x: m.celu(x, 0.7)),
    "threshold": ([_data(3, 4)], [], lambda m, x: m.threshold(x, 0.2, -3.0)),
    "rrelu_eval": ([_data(3, 4)], [], lambda m, x: m.rrelu(x, 0.1, 0.3)),
    "kl_div": (
        [_data(3, 4)], [np.abs(_data(3, 4))],
        lambda m, x, t: m.kl_div(x, t),
    ),
    "kl_div_log_target_sum": (
        [_data(3, 4), _data(3, 4)], [],
        lambda m, x, t: m.kl_div(x, t, 2, log_target=True),
    ),
    "kl_div_none": ([_data(3, 4)], [np.abs(_data(3, 4))], lambda m, x, t: m.kl_div(x, t, 0)),
    "cosine_embedding_loss": (
        [_data(4, 5), _data(4, 5)], [np.array([1.0, -1.0, -1.0, 1.0])],
        lambda m, a, b, y: m.cosine_embedding_loss(a, b, y, 0.1, 2),
    ),
    "margin_ranking_loss": (
        [_data(5), _data(5)], [np.array([1.0, -1.0, 1.0, -1.0, 1.0])],
        lambda m, a, b, y: m.margin_ranking_loss(a, b, y, 0.3),
    ),
    "hinge_embedding_loss": (
        [_data(6)], [np.array([1.0, -1.0, 1.0, -1.0, -1.0, 1.0])],
        lambda m, x, y: m.hinge_embedding_loss(x, y, 0.8, 0),
    ),
    "triplet_margin_loss": (
        [_data(4, 3), _data(4, 3), _data(4, 3)], [],
        lambda m, a, p, n: m.triplet_margin_loss(a, p, n, 1.0, 1.5, 1e-6, True, 1),
    ),
    "poisson_nll_loss": (
        [_data(6)], [np.abs(_data(6)).round()],
        lambda m, x, t: m.poisson_nll_loss(x, t, True, True, 1e-8, 2),
    ),
    "poisson_nll_loss_rates": (
        [_data(6, positive=True)], [np.abs(_data(6)).round()],
        lambda m, x, t: m.poisson_nll_loss(x, t, False, False, 1e-8, 1),
    ),
    "binary_cross_entropy_with_logits": (
        [_data(3, 4)], [RNG.uniform(size=(3, 4)), _data(4, positive=True),
                        _data(4, positive=True)],
        lambda m, x, t, w, pw: m.binary_cross_entropy_with_logits(x, t, w, pw, 0),
    ),
    "binary_cross_entropy_with_logits_default": (
        [_data(3, 4)], [RNG.uniform(size=(3, 4))],
        lambda m, x, t: m.binary_cross_entropy_with_logits(x, t),
    ),
    "constant_pad_nd": ([_data(2, 3, 4)], [], lambda m, x: m.constant_pad_nd(x, [1, 2, -1, 1])),
    "constant_pad_nd_value": ([_data(2, 3)], [], lambda m, x: m.constant_pad_nd(x, [2, 0], 1.5)),
    "grid_sampler": (
        [_data(1, 2, 4, 5), RNG.uniform(-1.1, 1.1, (1, 3, 2, 2))], [],
        lambda m, x, g: m.grid_sampler(x, g, 0, 1, False),
    ),
    "grid_sampler_nearest": (
        [_data(1, 2, 4, 5)], [RNG.uniform(-0.9, 0.9, (1, 3, 2, 2))],
        lambda m, x, g: m.grid_sampler(x, g, 1, 2, True),
    ),
    "affine_grid_generator": (
        [_data(2, 2, 3)], [], lambda m, t: m.affine_grid_generator(t, [2, 1, 3, 4], False),
    ),
    "affine_grid_generator_3d": (
        [_data(1, 3, 4)], [], lambda m, t: m.affine_grid_generator(t, [1, 1, 2, 3, 2], True),
    ),
    "ctc_loss": (
        # PyTorch's backward assumes log_softmax outputs: compare through one
        [_data(6, 2, 4)], [np.array([[1, 2, 1], [3, 3, 0]])],
        lambda m, x, t: m.ctc_loss(x.log_softmax(2), t, [6, 5], [3, 2], 0, 1, False),
    ),
    "ctc_loss_none": (
        [_data(6, 2, 4)], [np.array([[1, 2, 1], [3, 3, 0]])],
        lambda m, x, t: m.ctc_loss(x.log_softmax(2), t, [6, 5], [3, 2]),
    ),
}


def _run(module, name: str, grads: list[np.ndarray], constants: list[np.ndarray]):
    _, _, call = CASES[name]
    as_tensor = tl.tensor if module is tl else module.tensor
    leaves = [as_tensor(a, requires_grad=True) for a in grads]
    fixed = [as_tensor(c) for c in constants]
    return leaves, call(module, *leaves, *fixed)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    grads, constants, _ = CASES[name]
    ours_in, ours = _run(tl, name, grads, constants)
    theirs_in, theirs = _run(torch, name, grads, constants)
    ours_t = ours if isinstance(ours, tuple) else (ours,)
    theirs_t = theirs if isinstance(theirs, tuple) else (theirs,)
    assert type(ours) is type(theirs) or isinstance(ours, tl.Tensor)
    assert len(ours_t) == len(theirs_t)
    for a, b in zip(ours_t, theirs_t, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-10)
    upstream = RNG.standard_normal(tuple(ours_t[0].shape))
    (ours_t[0] * tl.tensor(upstream)).sum().backward()
    (theirs_t[0] * torch.tensor(upstream)).sum().backward()
    for a, b in zip(ours_in, theirs_in, strict=True):
        expected = np.zeros(tuple(b.shape)) if b.grad is None else b.grad.numpy()
        got = np.zeros(tuple(a.shape)) if a.grad is None else a.grad.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)


NOT_SMOOTH = {"max_pool1d", "max_pool1d_stride", "max_pool2d", "max_pool3d", "hardshrink",
              "threshold", "max_pool1d_with_indices", "adaptive_max_pool1d", "grid_sampler_nearest",
              "rrelu_eval", "prelu", "margin_ranking_loss", "hinge_embedding_loss",
              "triplet_margin_loss", "embedding_padding"}  # the padding row has no gradient


@pytest.mark.parametrize("name", sorted(set(CASES) - NOT_SMOOTH))
def test_gradcheck(name: str) -> None:
    grads, constants, call = CASES[name]
    leaves = [tl.tensor(a, requires_grad=True) for a in grads]
    fixed = [tl.tensor(c) for c in constants]

    def first(*xs):
        out = call(tl, *xs, *fixed)
        return out[0] if isinstance(out, tuple) else out

    assert tl.autograd.gradcheck(first, tuple(leaves))


def test_gradcheck_of_the_piecewise_ones_away_from_kinks() -> None:
    x = tl.tensor(np.array([[-1.3, -0.4, 0.6, 1.2], [0.9, -2.0, 0.35, -0.8]]), requires_grad=True)
    assert tl.autograd.gradcheck(lambda v: tl.threshold(v, 0.2, -3.0), (x,))
    assert tl.autograd.gradcheck(lambda v: tl.hardshrink(v, 0.3), (x,))
    assert tl.autograd.gradcheck(lambda v: tl.rrelu(v, 0.1, 0.3), (x,))
    assert tl.autograd.gradcheck(lambda v: tl.max_pool1d(v.unsqueeze(0), 2), (x,))


@pytest.mark.parity
def test_signatures_follow_the_operators() -> None:
    torch = pytest.importorskip("torch")
    # the parameter names, in order, of the schemas that have one overload
    for name in ["dropout", "feature_dropout", "alpha_dropout_", "batch_norm", "layer_norm",
                 "group_norm", "instance_norm", "embedding", "embedding_bag", "kl_div",
                 "poisson_nll_loss", "binary_cross_entropy_with_logits", "triplet_margin_loss",
                 "constant_pad_nd", "grid_sampler", "affine_grid_generator", "rrelu", "selu",
                 "celu", "threshold", "max_pool1d", "max_pool1d_with_indices", "conv_tbc",
                 "hinge_embedding_loss", "margin_ranking_loss", "cosine_embedding_loss"]:
        schemas = [s for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}")
                   if s.overload_name in ("", "padding_idx")]
        schema = schemas[-1]
        expected = [a.name for a in schema.arguments]
        got = list(inspect.signature(getattr(tl, name)).parameters)
        # `out` is the keyword of the operator's `.out` overload (torch.threshold takes it too)
        got = [n for n in got if n != "out"]
        # PyTorch's first argument is often `self`; ours is `input`
        expected = ["input" if n == "self" else n for n in expected]
        assert got == expected, name


def test_identity_with_the_functional_form_where_torch_has_it() -> None:
    for name in ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                 "conv_transpose3d", "conv_tbc", "avg_pool1d", "adaptive_avg_pool1d", "bilinear",
                 "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "prelu", "hardshrink",
                 "selu_", "celu_", "threshold_", "rrelu_"]:
        assert getattr(tl, name) is getattr(F, name), name


@pytest.mark.parity
def test_embedding_bag_returns_the_kernel_tensors() -> None:
    torch = pytest.importorskip("torch")
    for dtype in (np.float64, np.float32):
        _check_embedding_bag_tensors(torch, _data(7, 3).astype(dtype))


def _check_embedding_bag_tensors(torch, table: np.ndarray) -> None:
    ids, offsets = np.array([1, 4, 4, 0, 2, 5, 6]), np.array([0, 3, 3, 5])
    for mode in (0, 1, 2):
        for pad in (None, 4):
            for last in (False, True):
                offs = np.append(offsets, 7) if last else offsets
                ours = tl.embedding_bag(tl.tensor(table), tl.tensor(ids), tl.tensor(offs), False,
                                        mode, False, None, last, pad)
                theirs = torch.embedding_bag(torch.tensor(table), torch.tensor(ids),
                                             torch.tensor(offs), False, mode, False, None, last,
                                             pad)
                assert len(ours) == 4
                for a, b in zip(ours, theirs, strict=True):
                    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
                    assert a.numpy().dtype == b.numpy().dtype


def test_embedding_bag_bad_input() -> None:
    table, ids = tl.randn(4, 2), tl.tensor([[0, 1]])
    with pytest.raises(ValueError, match="1-D indices"):
        tl.embedding_bag(table, ids, tl.tensor([0]))
    with pytest.raises(ValueError, match="mode must be 0"):
        tl.embedding_bag(table, tl.tensor([0, 1]), tl.tensor([0]), False, 3)


def test_dropout_family() -> None:
    tl.manual_seed(0)
    x = tl.ones(200, 8, 5, dtype=tl.float64)
    for fn in (tl.dropout, tl.feature_dropout, tl.alpha_dropout, tl.feature_alpha_dropout):
        assert fn(x, 0.5, False) is x
        assert fn(x, 0.0, True) is x
    out = tl.dropout(x, 0.25, True).numpy()
    assert set(np.unique(out)) <= {0.0, 1 / 0.75} and abs((out == 0).mean() - 0.25) < 0.02
    channel = tl.feature_dropout(x, 0.5, True).numpy()
    assert (channel == channel[:, :, :1]).all() and set(np.unique(channel)) <= {0.0, 2.0}
    assert abs((channel[:, :, 0] == 0).mean() - 0.5) < 0.05
    # the same draws as the functional forms, from the same seed
    tl.manual_seed(3)
    ours = tl.alpha_dropout(x, 0.2, True)
    tl.manual_seed(3)
    np.testing.assert_array_equal(ours.numpy(), F.alpha_dropout(x, 0.2, True).numpy())
    tl.manual_seed(3)
    ours = tl.feature_alpha_dropout(x, 0.2, True)
    tl.manual_seed(3)
    np.testing.assert_array_equal(ours.numpy(), F.feature_alpha_dropout(x, 0.2, True).numpy())
    tl.manual_seed(4)
    ours = tl.dropout(x, 0.3, True)
    tl.manual_seed(4)
    np.testing.assert_array_equal(ours.numpy(), F.dropout(x, 0.3, True).numpy())


def test_in_place_dropouts() -> None:
    for fn, reference in ((tl.dropout_, tl.dropout), (tl.feature_dropout_, tl.feature_dropout),
                          (tl.alpha_dropout_, tl.alpha_dropout),
                          (tl.feature_alpha_dropout_, tl.feature_alpha_dropout)):
        x = tl.randn(4, 3, 2, dtype=tl.float64)
        original = x.clone()
        tl.manual_seed(7)
        assert fn(x, 0.4, True) is x
        tl.manual_seed(7)
        np.testing.assert_array_equal(x.numpy(), reference(original, 0.4, True).numpy())
        unchanged = x.clone()
        assert fn(x, 0.4, False) is x
        np.testing.assert_array_equal(x.numpy(), unchanged.numpy())


def test_dropout_gradient_is_the_mask() -> None:
    tl.manual_seed(1)
    x = tl.randn(6, 5, dtype=tl.float64, requires_grad=True)
    y = tl.feature_dropout(x, 0.5, True)
    y.sum().backward()
    mask = y.detach().numpy() / x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), mask)
    # in place on a non-leaf: recorded in the graph
    x.grad = None
    h = x * 1.0
    tl.manual_seed(1)
    tl.dropout_(h, 0.5, True)
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), h.detach().numpy() / x.detach().numpy())


@pytest.mark.parity
def test_dropout_errors_like_torch() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        torch.feature_dropout(torch.ones(3), 0.5, True)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tl.feature_dropout(tl.ones(3), 0.5, True)
    with pytest.raises(ValueError, match="dropout probability"):
        tl.dropout(tl.ones(3), 1.5, True)
    with pytest.raises(TypeError):
        tl.dropout(tl.ones(3))  # p and train are required, as in torch
    with pytest.raises(TypeError):
        torch.dropout(torch.ones(3))


def test_rrelu_training() -> None:
    gen = tl.Generator().manual_seed(0)
    x = tl.tensor(np.r_[-np.ones(2000), np.ones(10), 0.0], requires_grad=True)
    y = tl.rrelu(x, 0.2, 0.4, True, gen)
    slopes = -y.detach().numpy()[:2000]
    assert 0.2 <= slopes.min() and slopes.max() <= 0.4 and abs(slopes.mean() - 0.3) < 0.01
    np.testing.assert_array_equal(y.detach().numpy()[2000:2010], np.ones(10))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[:2000], slopes)
    np.testing.assert_array_equal(x.grad.numpy()[2000:2010], np.ones(10))
    assert 0.2 <= x.grad.numpy()[-1] <= 0.4  # at 0, the drawn slope, as torch's kernel
    # the same generator state gives the same slopes; rrelu_ writes them in place
    z = tl.tensor(-np.ones(5))
    assert tl.rrelu_(z, 0.2, 0.4, True, tl.Generator().manual_seed(0)) is z
    np.testing.assert_array_equal(z.numpy(), y.detach().numpy()[:5])
    with pytest.raises(RuntimeError, match="Lower bound"):
        tl.rrelu(x, 0.5, 0.1)


@pytest.mark.parity
def test_conv_tbc_errors_like_torch() -> None:
    torch = pytest.importorskip("torch")
    cases = [((7, 2), (3, 2, 4), (4,), "Input must have 3 dims"),
             ((7, 2, 2), (3, 2), (4,), "Weight tensor must have 3 dims"),
             ((7, 2, 3), (3, 2, 4), (4,), "Input dim 2"),
             ((7, 2, 2), (3, 2, 4), (4, 1), "Bias must be 1-D"),
             ((7, 2, 2), (3, 2, 4), (5,), "Bias size must equal dim 2")]
    for x, w, b, message in cases:
        with pytest.raises(RuntimeError, match=message):
            torch.conv_tbc(torch.zeros(x), torch.zeros(w), torch.zeros(b))
        with pytest.raises(RuntimeError, match=message):
            tl.conv_tbc(tl.zeros(x), tl.zeros(w), tl.zeros(b))


def test_reductions_are_ints() -> None:
    x, t = tl.randn(2, 3), tl.rand(2, 3)
    with pytest.raises(TypeError, match="argument 'reduction' must be int"):
        tl.kl_div(x, t, "mean")
    with pytest.raises(ValueError, match="reduction must be 0"):
        tl.margin_ranking_loss(x, x, t, 0.0, 3)
    with pytest.raises(ValueError, match="interpolation_mode must be one of"):
        tl.grid_sampler(tl.zeros(1, 1, 2, 2), tl.zeros(1, 1, 1, 2), 5, 0, False)
    with pytest.raises(RuntimeError, match="Length of pad must be even"):
        tl.constant_pad_nd(x, [1, 2, 3])


def test_kl_div_mean_does_not_warn(recwarn) -> None:
    x, t = tl.randn(2, 3).log_softmax(1), tl.rand(2, 3)
    tl.kl_div(x, t)
    assert not [w for w in recwarn if "batchmean" in str(w.message)]


@pytest.mark.parity
def test_batch_norm_updates_running_estimates_like_torch() -> None:
    torch = pytest.importorskip("torch")
    x = _data(5, 3, 4)
    mean_l, var_l = tl.zeros(3, dtype=tl.float64), tl.ones(3, dtype=tl.float64)
    mean_t, var_t = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    tl.batch_norm(tl.tensor(x), None, None, mean_l, var_l, True, 0.3, 1e-5, False)
    torch.batch_norm(torch.tensor(x), None, None, mean_t, var_t, True, 0.3, 1e-5, False)
    np.testing.assert_allclose(mean_l.numpy(), mean_t.numpy(), rtol=1e-12)
    np.testing.assert_allclose(var_l.numpy(), var_t.numpy(), rtol=1e-12)
    tl.instance_norm(tl.tensor(x), None, None, mean_l, var_l, True, 0.3, 1e-5, False)
    torch.instance_norm(torch.tensor(x), None, None, mean_t, var_t, True, 0.3, 1e-5, False)
    np.testing.assert_allclose(mean_l.numpy(), mean_t.numpy(), rtol=1e-12)
    np.testing.assert_allclose(var_l.numpy(), var_t.numpy(), rtol=1e-12)
    calls = [
        ("running_mean must be defined", lambda m, v: m.batch_norm(
            v, None, None, None, None, False, 0.1, 1e-5, False)),
        ("running_var must be defined", lambda m, v: m.batch_norm(
            v, None, None, m.zeros(3, dtype=m.float64), None, False, 0.1, 1e-5, False)),
        ("Expected running_mean and running_var to be defined", lambda m, v: m.instance_norm(
            v, None, None, None, None, False, 0.1, 1e-5, False)),
        ("Feature dropout requires at least 2", lambda m, v: m.feature_alpha_dropout(
            v[0, 0], 0.5, True)),
    ]
    for message, call in calls:
        for module, value in ((tl, tl.tensor(x)), (torch, torch.tensor(x))):
            with pytest.raises(RuntimeError, match=message):
                call(module, value)


PROGRAM = """
import torch
import torch.nn as nn
from torch.nn.utils import fuse_conv_bn_eval, spectral_norm

x = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4) / 10 - 1
w, b = torch.linspace(0.5, 1.5, 3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
out = [
    torch.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False).sum(),
    torch.layer_norm(x, [4], None, None, 1e-5, True)[0, 0, 0],
    torch.group_norm(x.reshape(2, 3, 2, 2), 3)[1, 2, 1, 1],
    torch.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False)[0, 1, 2],
    torch.dropout(x, 0.5, False).sum(),
    torch.kl_div(x.log_softmax(-1), x.softmax(-1), 2),
    torch.margin_ranking_loss(x[0, 0], x[1, 0], torch.ones(4, dtype=torch.float64)).sum(),
    torch.embedding(x[0], torch.tensor([2, 0])).sum(),
    torch.conv_tbc(x.permute(2, 0, 1).contiguous(), torch.ones(2, 3, 5, dtype=torch.float64),
                   torch.zeros(5, dtype=torch.float64), 1).sum(),
    torch.max_pool1d_with_indices(x, 2)[1].sum(),
    torch.constant_pad_nd(x, [1, 1], 2.0).sum(),
    torch.selu(x).sum(), torch.celu(x, 0.5).sum(), torch.threshold(x, 0.1, -1.0).sum(),
    torch.rrelu(x).sum(),
    nn.CrossMapLRN2d(3)(x.reshape(2, 3, 2, 2)).sum(),
]
conv, bn = nn.Conv1d(3, 2, 2).double().eval(), nn.BatchNorm1d(2).double().eval()
with torch.no_grad():
    conv.weight.fill_(0.25)
    conv.bias.fill_(0.5)
    bn.running_mean.fill_(0.1)
out.append(fuse_conv_bn_eval(conv, bn)(x).sum())
layer = spectral_norm(nn.Linear(4, 2).double())
print(sorted(layer.state_dict()))
print(" ".join(f"{float(v):.6f}" for v in out))
"""


@pytest.mark.parity
def test_a_torch_program_runs_unchanged(tmp_path) -> None:
    pytest.importorskip("torch")
    root = Path(__file__).resolve().parent.parent
    script = tmp_path / "program.py"
    script.write_text(PROGRAM, encoding="utf-8")
    runs = [
        subprocess.run([sys.executable, *extra, str(script)], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300, env={**os.environ, "PYTHONPATH": str(root)})
        for extra in ([], ["-m", "tensorlib.run_as_torch"])
    ]
    for done in runs:
        assert done.returncode == 0, done.stderr
    assert runs[0].stdout == runs[1].stdout


def test_gradcheck_of_rrelu_training_with_fixed_slopes() -> None:
    # the same generator state gives the same slopes on every call, so the op is a fixed function
    x = tl.tensor(np.array([[-1.3, -0.4, 0.6], [0.9, -2.0, -0.8]]), requires_grad=True)
    assert tl.autograd.gradcheck(
        lambda v: tl.rrelu(v, 0.1, 0.3, True, tl.Generator().manual_seed(5)), (x,))
    assert tl.autograd.gradcheck(
        lambda v: tl.nn.functional.rrelu_(v * 1.0, 0.1, 0.3, True, tl.Generator().manual_seed(5)),
        (x,))
