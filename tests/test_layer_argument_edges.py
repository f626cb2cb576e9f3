"""Chapter 4: edge cases PyTorch's OpInfo samples found, against PyTorch 2.13: ``F.pad`` with
negative widths (cropping) in the reflect, replicate and circular modes; pooling and convolution
arguments given as one-element tuples, and an empty ``stride`` meaning the default (the shared
parser ``_ntuple``); ``multilabel_margin_loss`` on 0-d input; ``batch_norm`` on an empty 1-D
input; and ``RandomSampler`` (so ``DataLoader(shuffle=True)``) refusing an empty dataset."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck
from tensorlib.nn.functional.utils import _ntuple, _single

torch = pytest.importorskip("torch")


def _torch_pad(x, widths, mode):
    try:
        return torch.nn.functional.pad(torch.tensor(x), widths, mode=mode).numpy()
    except RuntimeError:
        return None


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_negative_widths_1d(mode: str) -> None:
    for n in range(1, 5):
        x = np.arange(float(2 * n)).reshape(1, 2, n)
        for before, after in itertools.product(range(-5, 6), repeat=2):
            theirs = _torch_pad(x, (before, after), mode)
            kept = n - max(-before, 0) - max(-after, 0)
            # PyTorch reads memory it never wrote when circular widths exceed what cropping
            # leaves; we refuse those
            garbage = mode == "circular" and (kept < 1 or max(before, after) > kept)
            if theirs is None or garbage:
                with pytest.raises(ValueError, match=f"pad: mode '{mode}' needs"):
                    F.pad(tl.tensor(x), (before, after), mode=mode)
                continue
            ours = F.pad(tl.tensor(x), (before, after), mode=mode).numpy()
            np.testing.assert_array_equal(ours, theirs, err_msg=f"{n} {before} {after}")


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_negative_widths_2d_and_3d(mode: str) -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    for widths in [(-1, 1, 2, -2), (1, -2, -1, 0), (-2, -1, 1, 1)]:
        np.testing.assert_allclose(F.pad(tl.tensor(x), widths, mode=mode).numpy(),
                                   _torch_pad(x, widths, mode))
    v = np.random.default_rng(1).standard_normal((1, 2, 3, 4, 5))
    widths = (-1, 2, 1, -1, -1, 1)
    np.testing.assert_allclose(F.pad(tl.tensor(v), widths, mode=mode).numpy(),
                               _torch_pad(v, widths, mode))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_negative_widths_gradcheck(mode: str) -> None:
    x = tl.tensor(np.random.default_rng(2).standard_normal((1, 2, 4, 5)), requires_grad=True)
    assert gradcheck(lambda t: F.pad(t, (-1, 2, 1, -2), mode=mode), (x,))


@pytest.mark.parity
def test_pad_old_behaviour_refused_negative() -> None:
    # before: "needs widths between 0 and ..." for any negative width
    x = tl.arange(4.0).reshape(1, 1, 4)
    assert F.pad(x, (-1, 1), mode="reflect").tolist() == [[[1.0, 2.0, 3.0, 2.0]]]
    assert F.pad(x, (-1, 1), mode="circular").tolist() == [[[1.0, 2.0, 3.0, 1.0]]]
    assert F.pad(x, (2, -4), mode="replicate").tolist() == [[[0.0, 0.0]]]


def test_ntuple_one_element_and_default() -> None:
    assert _ntuple((1,), "padding", 2) == (1, 1)
    assert _ntuple([3], "stride", 3) == (3, 3, 3)
    assert _ntuple((), "stride", 2, default=(4, 5)) == (4, 5)
    assert _ntuple(None, "stride", 2, default=(4, 5)) == (4, 5)
    assert _single((), "stride", default=3) == 3
    with pytest.raises(TypeError, match=r"stride must be an int or a pair of ints, got \(\)"):
        _ntuple((), "stride", 2)  # no default: as convolutions, which refuse it
    with pytest.raises(TypeError, match="padding must be an int or a pair of ints"):
        _ntuple((1, 2, 3), "padding", 2)


CALLS = [
    ("avg_pool2d", (1, 2, 6, 6), dict(kernel_size=2, stride=())),
    ("avg_pool2d", (1, 2, 6, 6), dict(kernel_size=3, padding=(1,))),
    ("avg_pool2d", (1, 2, 6, 6), dict(kernel_size=(2,))),
    ("max_pool2d", (1, 2, 6, 6), dict(kernel_size=3, stride=(), dilation=(1,), padding=(1,))),
    ("avg_pool3d", (1, 2, 4, 4, 4), dict(kernel_size=3, stride=(), padding=(1,))),
    ("max_pool3d", (1, 2, 4, 4, 4), dict(kernel_size=(2,), stride=())),
    ("avg_pool1d", (1, 2, 7), dict(kernel_size=2, stride=())),
    ("max_pool1d", (1, 2, 7), dict(kernel_size=(3,), stride=())),
    ("lp_pool2d", (1, 2, 6, 6), dict(norm_type=2, kernel_size=2, stride=())),
]


@pytest.mark.parity
@pytest.mark.parametrize("name, shape, kwargs", CALLS)
def test_pool_argument_forms(name, shape, kwargs) -> None:
    x = np.random.default_rng(3).standard_normal(shape)
    ours = getattr(F, name)(tl.tensor(x), **kwargs)
    theirs = getattr(torch.nn.functional, name)(torch.tensor(x), **kwargs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)
    t = tl.tensor(x, requires_grad=True)
    if name.startswith("avg"):
        assert gradcheck(lambda a: getattr(F, name)(a, **kwargs), (t,))


@pytest.mark.parity
def test_conv_and_pool_modules_one_element_tuples() -> None:
    x = np.random.default_rng(4).standard_normal((1, 2, 6, 6))
    w = np.random.default_rng(5).standard_normal((3, 2, 3, 3))
    for kwargs in (dict(stride=(2,)), dict(padding=(1,)), dict(dilation=(2,))):
        np.testing.assert_allclose(
            F.conv2d(tl.tensor(x), tl.tensor(w), **kwargs).numpy(),
            torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), **kwargs).numpy(),
            atol=1e-12)
    conv = tl.nn.Conv2d(2, 3, 3, padding=(1,), dtype=tl.float64)
    assert conv.padding == (1, 1) and tuple(conv(tl.tensor(x)).shape) == (1, 3, 6, 6)
    ours, theirs = tl.nn.MaxPool2d(2, stride=()), torch.nn.MaxPool2d(2, stride=())
    assert repr(ours) == repr(theirs)
    assert tuple(ours(tl.tensor(x)).shape) == tuple(theirs(torch.tensor(x)).shape)
    with pytest.raises(TypeError, match="stride must be an int or a pair"):
        F.conv2d(tl.tensor(x), tl.tensor(w), stride=())  # PyTorch refuses it too


@pytest.mark.parity
@pytest.mark.parametrize("shapes", [((), ()), ((1,), ()), ((), (1,)), ((1,), (1,))])
@pytest.mark.parametrize("label", [0, -1])
def test_multilabel_margin_loss_0d(shapes, label) -> None:
    x, y = np.full(shapes[0], 0.3), np.full(shapes[1], label)
    for reduction in ("none", "mean", "sum"):
        ours = F.multilabel_margin_loss(tl.tensor(x), tl.tensor(y), reduction=reduction)
        theirs = torch.nn.functional.multilabel_margin_loss(
            torch.tensor(x), torch.tensor(y), reduction=reduction)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    t = tl.tensor(x, requires_grad=True)
    assert gradcheck(lambda a: F.multilabel_margin_loss(a, tl.tensor(y)), (t,))


def test_multilabel_margin_loss_0d_errors() -> None:
    with pytest.raises(RuntimeError, match=r"inconsistent target size: \[\] for input of size"):
        F.multilabel_margin_loss(tl.zeros(3), tl.tensor(0))
    with pytest.raises(RuntimeError, match="out of range"):
        F.multilabel_margin_loss(tl.tensor(0.3), tl.tensor(2))


@pytest.mark.parity
def test_batch_norm_empty_1d() -> None:
    for training, stats in ((True, False), (False, True), (True, True)):
        mean, var = (tl.zeros(0), tl.ones(0)) if stats else (None, None)
        ours = F.batch_norm(tl.zeros(0), mean, var, training=training)
        tmean, tvar = (torch.zeros(0), torch.ones(0)) if stats else (None, None)
        theirs = torch.nn.functional.batch_norm(torch.zeros(0), tmean, tvar, training=training)
        assert tuple(ours.shape) == tuple(theirs.shape) == (0,)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    x = tl.zeros(0, requires_grad=True)
    F.batch_norm(x, None, None, training=True).sum().backward()
    assert tuple(x.grad.shape) == (0,)
    with pytest.raises(ValueError):
        F.batch_norm(tl.zeros(3), None, None, training=True)  # other 1-D inputs still refused


class _Empty(tl.utils.data.Dataset):
    def __len__(self):
        return 0

    def __getitem__(self, index):
        raise IndexError(index)


@pytest.mark.parity
def test_random_sampler_refuses_an_empty_dataset() -> None:
    message = "num_samples should be a positive integer value, but got num_samples=0"
    with pytest.raises(ValueError, match=message):
        tl.utils.data.DataLoader(_Empty(), batch_size=4, shuffle=True)
    with pytest.raises(ValueError, match=message):
        torch.utils.data.DataLoader(_Empty(), batch_size=4, shuffle=True)
    with pytest.raises(ValueError, match=message):
        tl.utils.data.RandomSampler(range(0))
    assert len(tl.utils.data.RandomSampler(range(0), replacement=True, num_samples=3)) == 3
    assert list(tl.utils.data.DataLoader(_Empty(), batch_size=4)) == []
