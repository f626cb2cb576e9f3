"""BatchNorm1d/2d, F.batch_norm and F.dropout2d against PyTorch 2.13, and float64 gradchecks.

A tensorlib layer and a torch layer start from the same parameters; both run the same inputs
through several training steps and an evaluation, and every output, gradient and buffer
(``running_mean``, ``running_var``, ``num_batches_tracked``) is compared.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib import nn
from tensorlib.autograd import gradcheck

TOLERANCES = {np.float32: dict(rtol=2e-4, atol=2e-5), np.float64: dict(rtol=1e-9, atol=1e-11)}
DTYPES = [pytest.param(np.float32, id="float32"), pytest.param(np.float64, id="float64")]
SHAPES = {"BatchNorm1d": [(6, 3), (5, 3, 4)], "BatchNorm2d": [(4, 3, 5, 2)]}


# ------------------------------------------------------------------- behaviour without torch


def test_training_statistics_and_running_estimates_follow_the_definition() -> None:
    rng = np.random.default_rng(0)
    bn = nn.BatchNorm2d(3, dtype=tl.float64)
    batches = [rng.standard_normal((4, 3, 2, 2)) * 3 + 1 for _ in range(3)]
    mean, var = np.zeros(3), np.ones(3)
    for x in batches:
        y = bn(tl.tensor(x)).numpy()
        mu, sigma2 = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
        np.testing.assert_allclose(
            y,
            (x - mu[:, None, None]) / np.sqrt(sigma2[:, None, None] + 1e-5),
            rtol=1e-12,
            atol=1e-12,
        )
        # unbiased variance in the estimate
        mean, var = 0.9 * mean + 0.1 * mu, 0.9 * var + 0.1 * sigma2 * 16 / 15
    np.testing.assert_allclose(bn.running_mean.numpy(), mean, rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), var, rtol=1e-12)
    assert bn.num_batches_tracked.item() == 3 and bn.num_batches_tracked.dtype == tl.int64


def test_eval_uses_the_running_estimates_and_updates_nothing() -> None:
    bn = nn.BatchNorm1d(2, dtype=tl.float64)
    bn(tl.tensor(np.array([[1.0, 2.0], [3.0, 6.0]])))
    bn.eval()
    before = {k: v.numpy().copy() for k, v in bn.state_dict().items()}
    x = np.array([[5.0, -1.0]])
    y = bn(tl.tensor(x)).numpy()
    expected = (x - before["running_mean"]) / np.sqrt(before["running_var"] + 1e-5)
    np.testing.assert_allclose(y, expected, rtol=1e-12)
    for k, v in bn.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])


def test_momentum_none_is_the_cumulative_average() -> None:
    rng = np.random.default_rng(1)
    bn = nn.BatchNorm1d(2, momentum=None, dtype=tl.float64)
    batches = [rng.standard_normal((5, 2)) for _ in range(4)]
    for x in batches:
        bn(tl.tensor(x))
    np.testing.assert_allclose(
        bn.running_mean.numpy(), np.mean([x.mean(axis=0) for x in batches], axis=0), rtol=1e-12
    )


def test_no_running_stats_uses_batch_statistics_in_eval_too() -> None:
    bn = nn.BatchNorm1d(2, track_running_stats=False, affine=False).eval()
    assert bn.running_mean is None and list(bn.state_dict()) == []
    y = bn(tl.tensor([[1.0, 2.0], [3.0, 4.0]])).numpy()
    np.testing.assert_allclose(y, [[-1.0, -1.0], [1.0, 1.0]], rtol=1e-4)


def test_state_dict_names_and_a_cast_keeps_the_counter_int64() -> None:
    bn = nn.BatchNorm2d(4)
    assert list(bn.state_dict()) == [
        "weight",
        "bias",
        "running_mean",
        "running_var",
        "num_batches_tracked",
    ]
    bn.double()
    assert bn.running_mean.dtype == tl.float64 and bn.num_batches_tracked.dtype == tl.int64
    assert (
        repr(bn)
        == "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, "
           "track_running_stats=True)"
    )


def test_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(tl.zeros(2, 3))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.BatchNorm1d(3)(tl.zeros(2, 3, 1, 1))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(tl.zeros(1, 3))
    with pytest.raises(ValueError, match=r"running_mean must have shape \(3,\)"):
        F.batch_norm(tl.zeros(2, 3), tl.zeros(4), tl.ones(3))
    with pytest.raises(ValueError, match="needed when training=False"):
        F.batch_norm(tl.zeros(2, 3), None, None)


@pytest.mark.parametrize("training", [True, False], ids=["training", "eval"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 3, 5), (2, 3, 2, 3)])
def test_gradcheck_batch_norm(training: bool, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(2)
    x, w, b = (tl.tensor(rng.standard_normal(s), requires_grad=True) for s in (shape, (3,), (3,)))
    mean, var = tl.tensor(rng.standard_normal(3)), tl.tensor(rng.random(3) + 0.5)
    if training:
        assert gradcheck(
            lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (x, w, b)
        )
    else:
        assert gradcheck(
            lambda x, w, b: F.batch_norm(x, mean, var, w, b, training=False), (x, w, b)
        )


def test_dropout2d_zeroes_whole_channels() -> None:
    out = F.dropout2d(tl.ones(8, 6, 3, 3), 0.5, generator=tl.Generator(0)).numpy().reshape(8, 6, -1)
    assert np.all((out == 0).all(-1) | (out == 2).all(-1))
    assert 0 < (out[:, :, 0] == 0).mean() < 1
    x = tl.ones(2, 3, 4, requires_grad=True)
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):  # as PyTorch
        y = F.dropout2d(x, 0.25, generator=tl.Generator(1))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # the gradient is the mask
    layer = nn.Dropout2d(0.3)
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        assert repr(layer) == "Dropout2d(p=0.3, inplace=False)" and layer.eval()(x) is x
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):  # as PyTorch
        F.dropout2d(tl.ones(2, 3), 0.5)


# ------------------------------------------------------------------------------ parity


def _pair(cls_name: str, dtype, rng, **options):
    torch = pytest.importorskip("torch")
    ours = getattr(nn, cls_name)(3, **options)
    theirs = getattr(torch.nn, cls_name)(3, **options)
    if dtype is np.float64:
        ours, theirs = ours.double(), theirs.double()
    values = {name: rng.standard_normal(3).astype(dtype) for name, _ in ours.named_parameters()}
    ours.load_state_dict(values, strict=False)
    with torch.no_grad():
        for name, value in values.items():
            getattr(theirs, name).copy_(torch.from_numpy(value))
    return torch, ours, theirs


def _compare_state(ours, theirs, tolerance) -> None:
    theirs_state = theirs.state_dict()
    assert list(ours.state_dict()) == list(theirs_state)
    for name, value in ours.state_dict().items():
        np.testing.assert_allclose(
            value.numpy(), theirs_state[name].numpy(), **tolerance, err_msg=name
        )


@pytest.mark.parity
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"momentum": None},
        {"affine": False},
        {"bias": False},
        {"track_running_stats": False},
        {"momentum": 0.3, "eps": 1e-3},
    ],
    ids=["default", "momentum-None", "no-affine", "no-bias", "no-running-stats", "momentum-eps"],
)
@pytest.mark.parametrize("cls_name", ["BatchNorm1d", "BatchNorm2d"])
def test_batchnorm_matches_pytorch(cls_name: str, options: dict, dtype) -> None:
    rng = np.random.default_rng(3)
    torch, ours, theirs = _pair(cls_name, dtype, rng, **options)
    tolerance = TOLERANCES[dtype]
    for shape in SHAPES[cls_name]:
        for mode in ("train", "train", "eval", "train"):
            ours.train(mode == "train")
            theirs.train(mode == "train")
            x = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
            cotangent = rng.standard_normal(shape).astype(dtype)
            x_ours, x_theirs = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            y_ours, y_theirs = ours(x_ours), theirs(x_theirs)
            np.testing.assert_allclose(
                y_ours.detach().numpy(), y_theirs.detach().numpy(), **tolerance
            )
            (y_ours * tl.tensor(cotangent)).sum().backward()
            (y_theirs * torch.from_numpy(cotangent)).sum().backward()
            np.testing.assert_allclose(x_ours.grad.numpy(), x_theirs.grad.numpy(), **tolerance)
            for name, param in ours.named_parameters():
                np.testing.assert_allclose(
                    param.grad.numpy(),
                    getattr(theirs, name).grad.numpy(),
                    **tolerance,
                    err_msg=name,
                )
            ours.zero_grad()
            theirs.zero_grad()
            _compare_state(ours, theirs, tolerance)


@pytest.mark.parity
def test_a_pytorch_state_dict_loads_into_batchnorm() -> None:
    torch = pytest.importorskip("torch")
    theirs = torch.nn.BatchNorm2d(3)
    theirs(torch.randn(4, 3, 2, 2))
    ours = nn.BatchNorm2d(3)
    ours.load_state_dict(theirs.state_dict())
    ours.eval()
    theirs.eval()
    x = np.random.default_rng(4).standard_normal((2, 3, 2, 2)).astype(np.float32)
    np.testing.assert_allclose(
        ours(tl.tensor(x)).numpy(),
        theirs(torch.from_numpy(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )
    assert ours.num_batches_tracked.item() == 1


@pytest.mark.parity
def test_functional_batch_norm_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 2, 3))
    for training in (True, False):
        rm_ours, rv_ours = tl.tensor(np.zeros(2)), tl.tensor(np.ones(2))
        rm_theirs, rv_theirs = (
            torch.zeros(2, dtype=torch.float64),
            torch.ones(2, dtype=torch.float64),
        )
        ours = F.batch_norm(
            tl.tensor(x), rm_ours, rv_ours, training=training, momentum=0.2, eps=1e-3
        ).numpy()
        theirs = torch.nn.functional.batch_norm(
            torch.from_numpy(x), rm_theirs, rv_theirs, training=training, momentum=0.2, eps=1e-3
        ).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(rm_ours.numpy(), rm_theirs.numpy(), rtol=1e-12)
        np.testing.assert_allclose(rv_ours.numpy(), rv_theirs.numpy(), rtol=1e-12)


@pytest.mark.parity
# torch warns about reading a 3-D input as (N, C, L), as we do
@pytest.mark.filterwarnings("ignore:dropout2d")
def test_dropout2d_agrees_with_pytorch_in_structure() -> None:
    torch = pytest.importorskip("torch")
    for shape in ((4, 5, 3, 3), (4, 5, 7)):
        theirs = torch.nn.functional.dropout2d(torch.ones(shape), 0.4).numpy()
        ours = F.dropout2d(tl.ones(*shape), 0.4, generator=tl.Generator(2)).numpy()
        # the same structure: one decision per (sample, channel), survivors 1/(1-p)
        for out in (ours, theirs):
            channels = out.reshape(shape[0], shape[1], -1)
            assert np.all((channels == 0).all(-1) | np.isclose(channels, 1 / 0.6).all(-1))
