"""Chapter 4's legacy PyTorch APIs: the losses' ``size_average``/``reduce``, dropout2d/3d on inputs
of other dims, and ``DistributedSampler``, against PyTorch 2.13 (values, gradients, warnings,
errors), with float64 gradchecks."""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck
from tensorlib.nn.functional.structured_loss import multilabel_margin_loss
from tensorlib.utils.data.distributed import DistributedSampler

torch = pytest.importorskip("torch")

LEGACY = [(None, None), (False, None), (True, False), (None, False), (False, True), (True, True),
          (False, False), (None, True), (True, None)]
LEGACY_MODULES = sorted(
    name for name in dir(torch.nn)
    if name.endswith("Loss") and isinstance(getattr(torch.nn, name), type)
    and "size_average" in inspect.signature(getattr(torch.nn, name).__init__).parameters
)
RNG = np.random.default_rng(0)


def recorded(make):
    """``make()``'s result and the (category, message) of every warning it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = make()
    return result, [(w.category, str(w.message)) for w in caught]


# ------------------------------------------------------------------------ size_average, reduce


def test_every_legacy_loss_module_exists_with_pytorchs_argument_order():
    assert len(LEGACY_MODULES) >= 17
    for name in LEGACY_MODULES:
        theirs = list(inspect.signature(getattr(torch.nn, name).__init__).parameters)
        ours = list(inspect.signature(getattr(nn, name).__init__).parameters)
        assert ours[: len(theirs)] == theirs, name


@pytest.mark.parity
@pytest.mark.parametrize("name", LEGACY_MODULES)
@pytest.mark.parametrize(("size_average", "reduce"), LEGACY)
def test_legacy_arguments_pick_pytorchs_reduction_and_warning(name, size_average, reduce):
    kwargs = {"size_average": size_average, "reduce": reduce, "reduction": "sum"}
    theirs, their_warnings = recorded(lambda: getattr(torch.nn, name)(**kwargs))
    ours, our_warnings = recorded(lambda: getattr(nn, name)(**kwargs))
    assert ours.reduction == theirs.reduction
    assert our_warnings == their_warnings
    if size_average is None and reduce is None:
        assert ours.reduction == "sum" and not our_warnings


@pytest.mark.parity
@pytest.mark.parametrize("name", LEGACY_MODULES)
def test_legacy_arguments_by_position(name):
    """``Loss(default, ..., size_average=False)`` passed positionally, as old programs do."""
    parameters = list(inspect.signature(getattr(torch.nn, name).__init__).parameters.values())[1:]
    args = []
    for parameter in parameters:
        if parameter.name == "size_average":
            args.append(False)
            break
        args.append(parameter.default)
    theirs, their_warnings = recorded(lambda: getattr(torch.nn, name)(*args))
    ours, our_warnings = recorded(lambda: getattr(nn, name)(*args))
    assert ours.reduction == theirs.reduction == "sum" and our_warnings == their_warnings


def test_the_warning_is_pytorchs_text_and_category():
    with pytest.warns(UserWarning, match=r"^size_average and reduce args will be deprecated, "
                      r"please use reduction='none' instead\.$"):
        assert nn.MSELoss(reduce=False).reduction == "none"
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert nn.CrossEntropyLoss(None, False).reduction == "sum"


def _module_inputs(L, name):
    x = RNG.standard_normal((4, 3))
    probabilities = 1 / (1 + np.exp(-x))
    signs = np.array([1.0, -1.0, 1.0, -1.0])
    if name in ("CrossEntropyLoss", "MultiMarginLoss"):
        return L.tensor(x), L.tensor(np.array([2, 0, 1, 1]))
    if name == "NLLLoss":
        return L.tensor(np.log(probabilities / probabilities.sum(1, keepdims=True))), L.tensor(
            np.array([2, 0, 1, 1]))
    if name == "BCELoss":
        return L.tensor(probabilities), L.tensor(RNG.uniform(size=(4, 3)))
    if name in ("MarginRankingLoss", "CosineEmbeddingLoss"):
        return L.tensor(x), L.tensor(x[::-1].copy()), L.tensor(signs if "Rank" not in name else
                                                               np.ones((4, 3)))
    if name == "TripletMarginLoss":
        return L.tensor(x), L.tensor(x * 0.5), L.tensor(x[::-1].copy())
    if name == "HingeEmbeddingLoss":
        return L.tensor(x), L.tensor(np.sign(x))
    if name == "SoftMarginLoss":
        return L.tensor(x), L.tensor(np.sign(x))
    if name == "MultiLabelMarginLoss":
        return L.tensor(x), L.tensor(np.array([[2, -1, 0]] * 4))
    if name == "KLDivLoss":
        return L.tensor(np.log(probabilities)), L.tensor(RNG.uniform(size=(4, 3)))
    if name == "PoissonNLLLoss":
        return L.tensor(x), L.tensor(RNG.poisson(2.0, (4, 3)).astype(np.float64))
    return L.tensor(x), L.tensor(RNG.standard_normal((4, 3)))


@pytest.mark.parity
@pytest.mark.parametrize("name", LEGACY_MODULES)
@pytest.mark.parametrize(("size_average", "reduce"), [(False, None), (True, False), (None, None)])
def test_legacy_loss_values_match_pytorch(name, size_average, reduce):
    state = RNG.bit_generator.state
    theirs_in = _module_inputs(torch, name)
    RNG.bit_generator.state = state
    ours_in = _module_inputs(tl, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(torch.nn, name)(size_average=size_average, reduce=reduce)(*theirs_in)
        ours = getattr(nn, name)(size_average=size_average, reduce=reduce)(*ours_in)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


FUNCTIONAL = {
    "binary_cross_entropy": lambda L, f, x, y, **k: f(L.sigmoid(x), y.abs() / 3, None, **k),
    "smooth_l1_loss": lambda L, f, x, y, **k: f(x, y, **k, beta=0.7),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
@pytest.mark.parametrize(("size_average", "reduce"), [(False, None), (True, False), (None, True)])
def test_legacy_functional_values_and_gradients_match_pytorch(name, size_average, reduce):
    assert list(inspect.signature(getattr(F, name)).parameters) == list(
        inspect.signature(getattr(torch.nn.functional, name)).parameters)
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)) * 0.5
    results = []
    for L, functional in ((torch, torch.nn.functional), (tl, F)):
        xt = L.tensor(x, requires_grad=True)
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            out = FUNCTIONAL[name](L, getattr(functional, name), xt, L.tensor(y),
                                   size_average=size_average, reduce=reduce)
        out.sum().backward()
        results.append((out.detach().numpy(), xt.grad.numpy()))
    for ours, theirs in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parity
def test_legacy_positional_functionals_and_multilabel_margin():
    x = RNG.standard_normal((3, 4))
    target = np.array([[3, 0, -1, 1], [1, -1, 0, 0], [0, 1, 2, 3]])
    for size_average, reduce in ((False, None), (None, False)):
        with pytest.warns(UserWarning):
            theirs = torch.nn.functional.multilabel_margin_loss(
                torch.tensor(x), torch.tensor(target), size_average, reduce)
        with pytest.warns(UserWarning):
            ours = multilabel_margin_loss(tl.tensor(x), tl.tensor(target), size_average, reduce)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        ours = F.binary_cross_entropy(tl.full((3,), 0.25), tl.ones(3), None, False)
    assert math.isclose(ours.item(), 3 * math.log(4), rel_tol=1e-6)


def test_legacy_reduction_gradchecks():
    x = tl.tensor(RNG.uniform(0.1, 0.9, (3, 4)), requires_grad=True)
    y = tl.tensor(RNG.uniform(size=(3, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(lambda x: F.binary_cross_entropy(x, y, None, False), (x,))
        assert gradcheck(lambda x: F.smooth_l1_loss(x, y, None, False, beta=0.5), (x,))
        assert gradcheck(lambda x: nn.MSELoss(False)(x, y), (x,))


def test_invalid_reduction_still_raises_without_legacy_arguments():
    with pytest.raises(ValueError):
        nn.MSELoss(reduction="avg")


# ---------------------------------------------------------------------------- dropout2d / 3d


@pytest.mark.parity
@pytest.mark.parametrize(("name", "shape"), [
    ("dropout2d", (6, 5)), ("dropout2d", (4, 5, 7)), ("dropout2d", (2, 3, 2, 2, 2)),
    ("dropout3d", (3, 4, 5)), ("dropout3d", (2, 3, 2, 2, 2, 2)), ("dropout3d", (4,)),
    ("dropout3d", (3, 2, 2, 2)), ("dropout2d", (3, 2, 2, 2)),
])
def test_dropout_nd_warnings_and_channel_axes_match_pytorch(name, shape):
    theirs, their_warnings = recorded(
        lambda: getattr(torch.nn.functional, name)(torch.ones(shape, dtype=torch.float64), 0.5))
    ours, our_warnings = recorded(
        lambda: getattr(F, name)(tl.ones(*shape, dtype=tl.float64), 0.5,
                                 generator=tl.Generator(3)))
    assert our_warnings == their_warnings
    assert ours.shape == tuple(theirs.shape)
    # the channel axes: the two leading dims, or (for dropout3d of a non-5-D input) the leading
    # dim of the input read as unbatched
    lead = 1 if name == "dropout3d" and len(shape) != 5 else 2
    for out in (ours.numpy(), theirs.numpy()):
        per_channel = out.reshape(int(np.prod(shape[:lead])), -1)
        assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))


def test_dropout2d_of_a_2d_input_drops_single_elements():
    with pytest.warns(UserWarning, match=r"Received a 2-D input to dropout2d, which is deprecated"):
        out = F.dropout2d(tl.ones(300, 40), 0.5, generator=tl.Generator(1)).numpy()
    assert set(np.unique(out)) == {0.0, 2.0} and 0.45 < (out == 0).mean() < 0.55
    with pytest.warns(UserWarning, match="Received a 2-D input"):
        layer_out = nn.Dropout2d(0.5)(tl.ones(5, 4))
    assert layer_out.shape == (5, 4)
    x = tl.tensor(RNG.standard_normal((4, 5)), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(lambda x: F.dropout2d(x, 0.3, generator=tl.Generator(8)), (x,))
        assert gradcheck(lambda x: F.dropout3d(x, 0.3, generator=tl.Generator(8)), (x,))


@pytest.mark.parity
def test_dropout2d_without_a_channel_axis_raises_pytorchs_error():
    for L, functional in ((torch, torch.nn.functional), (tl, F)):
        with pytest.warns(UserWarning, match="Received a 1-D input"):
            with pytest.raises(RuntimeError, match="^Feature dropout requires at least 2 "
                               "dimensions in the input$"):
                functional.dropout2d(L.ones(5), 0.5)
    with pytest.raises(ValueError):
        F.dropout2d(tl.ones(2, 3), 1.5)


# ------------------------------------------------------------------------ DistributedSampler


def test_distributed_sampler_module_path():
    from tensorlib.utils.data.sampler import Sampler

    assert issubclass(DistributedSampler, Sampler)
    assert list(inspect.signature(DistributedSampler).parameters) == list(
        inspect.signature(torch.utils.data.distributed.DistributedSampler).parameters)


@pytest.mark.parity
@pytest.mark.parametrize("n", [1, 2, 7, 10, 12, 13])
@pytest.mark.parametrize("replicas", [1, 2, 3, 5, 16])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_split_matches_pytorch(n, replicas, drop_last):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    for rank in range(replicas):
        try:
            theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
            their_indices = list(theirs)
        except ZeroDivisionError:  # drop_last with n < replicas: nothing to pad from
            continue
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == their_indices and len(ours) == len(theirs)
        assert (ours.num_samples, ours.total_size) == (theirs.num_samples, theirs.total_size)


@pytest.mark.parametrize(("n", "replicas", "drop_last"), [(10, 3, False), (10, 3, True),
                                                          (4, 6, False), (9, 3, False)])
def test_distributed_sampler_shuffle_is_pytorchs_arithmetic_on_our_permutation(
    n, replicas, drop_last
):
    for epoch in (0, 3):
        permutation = tl.Generator().manual_seed(7 + epoch).randperm(n).tolist()
        total = (n // replicas if drop_last else -(-n // replicas)) * replicas
        padded = (permutation * (total // n + 1))[:total]
        seen = []
        for rank in range(replicas):
            sampler = DistributedSampler(range(n), replicas, rank, seed=7, drop_last=drop_last)
            sampler.set_epoch(epoch)
            assert list(sampler) == padded[rank:total:replicas] == list(sampler)
            seen += list(sampler)
        assert sorted(seen) == sorted(padded)


def test_distributed_sampler_errors():
    with pytest.raises(RuntimeError, match="^Requires distributed package to be available$"):
        DistributedSampler(range(4))
    with pytest.raises(RuntimeError, match="Requires distributed package"):
        DistributedSampler(range(4), num_replicas=2)
    for rank in (2, -1):
        with pytest.raises(ValueError, match=r"^Invalid rank .*, rank should be in the interval "
                           r"\[0, 1\]$"):
            DistributedSampler(range(4), 2, rank)
    with pytest.raises(ValueError, match=r"Invalid rank 2"):
        torch.utils.data.distributed.DistributedSampler(range(4), 2, 2)


def test_distributed_sampler_in_a_data_loader():
    dataset = tl.utils.data.TensorDataset(tl.arange(10))
    loaders = [tl.utils.data.DataLoader(dataset, batch_size=2, sampler=DistributedSampler(
        dataset, 2, rank, shuffle=False)) for rank in range(2)]
    batches = [[batch[0].tolist() for batch in loader] for loader in loaders]
    assert batches == [[[0, 2], [4, 6], [8]], [[1, 3], [5, 7], [9]]]


# -------------------------------------------------------------------------- upsample aliases


UPSAMPLE = [
    ("upsample", {"scale_factor": 2, "mode": "bilinear"}),
    ("upsample", {"size": 5, "mode": "linear", "align_corners": True}),
    ("upsample", {"size": (4, 7)}),
    ("upsample_nearest", {"size": (5, 7)}),
    ("upsample_nearest", {"scale_factor": 3}),
    ("upsample_bilinear", {"scale_factor": 2}),
    ("upsample_bilinear", {"size": (2, 9)}),
]


@pytest.mark.parity
@pytest.mark.parametrize(("name", "kwargs"), UPSAMPLE)
def test_upsample_aliases_match_pytorch_values_gradients_and_warnings(name, kwargs):
    from tensorlib.nn.functional import layers

    shape = (1, 2, 5) if kwargs.get("mode") == "linear" else (1, 2, 3, 4)
    x = RNG.standard_normal(shape)
    results = []
    for L, function in ((torch, getattr(torch.nn.functional, name)), (tl, getattr(layers, name))):
        xt = L.tensor(x, requires_grad=True)
        out, caught = recorded(lambda xt=xt, function=function: function(xt, **kwargs))
        out.pow(2).sum().backward()
        results.append((out.detach().numpy(), xt.grad.numpy(), caught))
    (theirs, their_grad, their_warnings), (ours, our_grad, our_warnings) = results
    assert our_warnings == their_warnings and len(ours.shape) == len(theirs.shape)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-10, atol=1e-12)


def test_upsample_bilinear_gradcheck():
    from tensorlib.nn.functional.layers import upsample_bilinear

    x = tl.tensor(RNG.standard_normal((1, 2, 3, 3)), requires_grad=True)
    with pytest.warns(UserWarning, match="^`nn.functional.upsample_bilinear` is deprecated. "
                      "Use `nn.functional.interpolate` instead.$"):
        assert gradcheck(lambda x: upsample_bilinear(x, size=(4, 5)), (x,))
