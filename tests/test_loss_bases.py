"""Chapter 4, section 11: the loss modules' bases ``_Loss`` and ``_WeightedLoss``
(``tensorlib.nn.modules.loss``), against PyTorch 2.13: which base each loss has, the legacy
``size_average``/``reduce`` arguments read once in the base, the ``weight`` buffer, and a loss
of one's own written as programs write it."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck
from tensorlib.nn.modules import loss as L
from tensorlib.nn.modules.loss import _Loss, _WeightedLoss
from tensorlib.nn.modules.module import Module

LOSSES = [name for name, obj in vars(L).items()
          if isinstance(obj, type) and issubclass(obj, Module) and "Loss" in name
          and not name.startswith("_")]


def _bases(cls):
    return [c.__name__ for c in cls.__mro__ if c.__name__ in ("_Loss", "_WeightedLoss")]


def test_every_loss_has_a_base() -> None:
    assert len(LOSSES) >= 23
    for name in LOSSES:
        assert issubclass(getattr(L, name), _Loss), name


@pytest.mark.parity
@pytest.mark.parametrize("name", LOSSES)
def test_loss_bases_match_pytorch(name: str) -> None:
    torch = pytest.importorskip("torch")
    theirs = getattr(torch.nn.modules.loss, name)
    assert _bases(getattr(L, name)) == _bases(theirs)


@pytest.mark.parity
def test_base_signatures_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for ours, theirs in ((_Loss, torch.nn.modules.loss._Loss),
                         (_WeightedLoss, torch.nn.modules.loss._WeightedLoss)):
        assert (list(inspect.signature(ours).parameters)
                == list(inspect.signature(theirs).parameters))


class SquaredLog(_Loss):
    def forward(self, input, target):
        per = (input.log1p() - target.log1p()) ** 2
        return {"mean": per.mean(), "sum": per.sum(), "none": per}[self.reduction]


@pytest.mark.parity
@pytest.mark.parametrize("size_average, reduce", [(None, None), (False, None), (True, False),
                                                   (None, True)])
def test_custom_loss_legacy_arguments(size_average, reduce) -> None:
    torch = pytest.importorskip("torch")

    class TorchSquaredLog(torch.nn.modules.loss._Loss):
        forward = SquaredLog.forward

    x, y = np.array([0.5, 2.0, 3.0]), np.array([1.0, 2.0, 1.0])
    with warnings.catch_warnings(record=True) as ours_w:
        warnings.simplefilter("always")
        ours = SquaredLog(size_average, reduce)
    with warnings.catch_warnings(record=True) as theirs_w:
        warnings.simplefilter("always")
        theirs = TorchSquaredLog(size_average, reduce)
    assert ours.reduction == theirs.reduction
    assert [str(w.message) for w in ours_w] == [str(w.message) for w in theirs_w]
    np.testing.assert_allclose(ours(tl.tensor(x), tl.tensor(y)).numpy(),
                               theirs(torch.tensor(x), torch.tensor(y)).numpy())


def test_base_keeps_any_reduction_built_ins_check() -> None:
    assert _Loss(reduction="batchmean").reduction == "batchmean"  # as PyTorch: not checked
    with pytest.raises(ValueError, match="reduction must be one of"):
        L.MSELoss(reduction="batchmean")
    with pytest.raises(ValueError, match="reduction must be one of"):
        L.MultiMarginLoss(reduction="avg")
    assert L.KLDivLoss(reduction="batchmean").reduction == "batchmean"


def test_legacy_arguments_still_warn_once() -> None:
    for cls in (L.MSELoss, L.NLLLoss, L.MarginRankingLoss, L.MultiMarginLoss, L.BCEWithLogitsLoss):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = cls(size_average=False)
        assert module.reduction == "sum"
        assert len(caught) == 1 and "reduction='sum'" in str(caught[0].message), cls


def test_weighted_loss_buffer_and_state_dict() -> None:
    weight = tl.tensor([1.0, 2.0, 0.5])
    for cls in (L.CrossEntropyLoss, L.NLLLoss, L.BCELoss, L.MultiMarginLoss,
                L.MultiLabelSoftMarginLoss):
        module = cls(weight=weight)
        assert list(dict(module.named_buffers())) == ["weight"], cls
        assert list(module.state_dict()) == ["weight"]
        assert list(cls().state_dict()) == []  # a None buffer is left out
    module = _WeightedLoss(tl.ones(2), reduction="sum")
    assert module.reduction == "sum" and module.weight.tolist() == [1.0, 1.0]


@pytest.mark.parity
def test_margin_losses_keep_their_attributes() -> None:
    torch = pytest.importorskip("torch")
    pairs = [(L.MultiMarginLoss(p=2, margin=0.5), torch.nn.MultiMarginLoss(p=2, margin=0.5)),
             (L.TripletMarginLoss(margin=0.3), torch.nn.TripletMarginLoss(margin=0.3)),
             (L.HuberLoss(delta=2.0), torch.nn.HuberLoss(delta=2.0)),
             (L.CTCLoss(blank=1), torch.nn.CTCLoss(blank=1))]
    for ours, theirs in pairs:
        for key in ("margin", "p", "delta", "blank", "reduction"):
            assert getattr(ours, key, None) == getattr(theirs, key, None), (ours, key)


def test_custom_loss_gradcheck() -> None:
    rng = np.random.default_rng(0)
    x = tl.tensor(rng.uniform(0.1, 2.0, 5), requires_grad=True)
    y = tl.tensor(rng.uniform(0.1, 2.0, 5), requires_grad=True)
    assert gradcheck(lambda a, b: SquaredLog()(a, b), (x, y))
