"""Chapter 4: PyTorch's private bases of the layers, at PyTorch's paths, as programs use them in
``isinstance`` checks and subclasses: ``_ConvNd`` and ``_ConvTransposeNd``
(``nn.modules.conv``), ``_NormBase`` and ``_BatchNorm`` (``nn.modules.batchnorm``),
``_MaxPoolNd`` and ``_AvgPoolNd`` (``nn.modules.pooling``)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.nn.modules.batchnorm import _BatchNorm, _NormBase
from tensorlib.nn.modules.conv import _ConvNd, _ConvTransposeNd
from tensorlib.nn.modules.instancenorm import _InstanceNorm
from tensorlib.nn.modules.pooling import _AvgPoolNd, _MaxPoolNd

BASES = {"conv": ("_ConvNd", "_ConvTransposeNd"), "batchnorm": ("_NormBase", "_BatchNorm"),
         "instancenorm": ("_NormBase", "_InstanceNorm"), "pooling": ("_MaxPoolNd", "_AvgPoolNd")}


def _bases(cls, names):
    return [c.__name__ for c in cls.__mro__ if c.__name__ in names]


@pytest.mark.parity
@pytest.mark.parametrize("module", sorted(BASES))
def test_bases_match_pytorch(module: str) -> None:
    torch = pytest.importorskip("torch")
    ours = importlib.import_module(f"tensorlib.nn.modules.{module}")
    theirs = importlib.import_module(f"torch.nn.modules.{module}")
    names = BASES[module]
    checked = 0
    for name, cls in vars(theirs).items():
        if (isinstance(cls, type) and issubclass(cls, torch.nn.Module)
                and cls.__module__ == theirs.__name__ and hasattr(ours, name)):
            assert _bases(getattr(ours, name), names) == _bases(cls, names), name
            checked += 1
    assert checked >= 6


def test_isinstance_as_init_code_uses_it() -> None:
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ConvTranspose1d(2, 2, 3),
                          nn.InstanceNorm2d(4), nn.MaxPool2d(2), nn.AvgPool1d(2),
                          nn.LazyBatchNorm1d(), nn.SyncBatchNorm(4), nn.Linear(2, 2))
    kinds = [(type(m).__name__, isinstance(m, _ConvNd), isinstance(m, _ConvTransposeNd),
              isinstance(m, _BatchNorm), isinstance(m, _NormBase), isinstance(m, _MaxPoolNd),
              isinstance(m, _AvgPoolNd)) for m in model]
    assert kinds == [
        ("Conv2d", True, False, False, False, False, False),
        ("BatchNorm2d", False, False, True, True, False, False),
        ("ConvTranspose1d", True, True, False, False, False, False),
        ("InstanceNorm2d", False, False, False, True, False, False),
        ("MaxPool2d", False, False, False, False, True, False),
        ("AvgPool1d", False, False, False, False, False, True),
        ("LazyBatchNorm1d", False, False, True, True, False, False),
        ("SyncBatchNorm", False, False, True, True, False, False),
        ("Linear", False, False, False, False, False, False),
    ]
    assert issubclass(_InstanceNorm, _NormBase) and not issubclass(_InstanceNorm, _BatchNorm)


def test_conv_reset_parameters_from_the_base() -> None:
    for layer in (nn.Conv1d(2, 3, 3), nn.Conv2d(2, 3, 3), nn.Conv3d(2, 3, 2),
                  nn.ConvTranspose2d(2, 3, 3), nn.ConvTranspose3d(2, 3, 2)):
        first = layer.weight.detach().numpy().copy()
        layer.reset_parameters(generator=tl.Generator(0))
        again = layer.weight.detach().numpy().copy()
        layer.reset_parameters(generator=tl.Generator(0))
        assert np.array_equal(again, layer.weight.detach().numpy())
        assert not np.array_equal(first, again)
        bound = 1 / np.sqrt(np.prod(layer.weight.shape[1:]))
        assert np.abs(again).max() <= bound


def test_norm_base_state_and_reset() -> None:
    for layer in (nn.BatchNorm1d(3), nn.InstanceNorm1d(3, affine=True, track_running_stats=True)):
        assert [n for n, _ in layer.named_buffers()] == ["running_mean", "running_var",
                                                         "num_batches_tracked"]
        layer.running_mean.fill_(2.0)
        layer.weight.data.fill_(3.0)
        layer.reset_parameters()
        assert layer.running_mean.tolist() == [0.0] * 3 and layer.weight.tolist() == [1.0] * 3
    layer = nn.InstanceNorm2d(3)
    layer.reset_running_stats()  # nothing tracked: a no-op, as PyTorch's
    assert layer.weight is None and layer.running_mean is None
    assert repr(nn.InstanceNorm1d(3)) == (
        "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, "
        "track_running_stats=False)")


class MyConv(_ConvNd):
    """A subclass of the base, as programs write one: PyTorch's arguments to the base."""

    def __init__(self):
        super().__init__(1, 2, (3,), (1,), (0,), (1,), False, (0,), 1, False, "zeros")
        self.weight.data = tl.zeros(2, 1, 3)


def test_subclassing_conv_base() -> None:
    layer = MyConv()
    layer.reset_parameters(generator=tl.Generator(1))
    assert float(layer.weight.abs().sum()) > 0


# PyTorch's constructors on the bases: _ConvNd's full argument list, _MaxPoolNd's
@pytest.mark.parity
def test_conv_attributes_transposed_and_output_padding_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for name, args in (("Conv1d", (2, 4, 3)), ("Conv2d", (2, 4, 3)), ("Conv3d", (2, 4, 3)),
                       ("ConvTranspose1d", (2, 4, 3)), ("ConvTranspose2d", (2, 4, 3)),
                       ("ConvTranspose3d", (2, 4, 3))):
        ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
        for attribute in ("transposed", "output_padding", "padding", "kernel_size", "stride",
                          "dilation", "groups", "padding_mode"):
            assert getattr(ours, attribute) == getattr(theirs, attribute), (name, attribute)


def _subclassed(base):
    class MyConv(base):
        def __init__(self, transposed: bool) -> None:
            super().__init__(4, 6, (3, 3), (2, 2), (1, 1), (1, 1), transposed, (1, 1), 2, True,
                             "zeros")

    return MyConv


@pytest.mark.parity
def test_a_program_can_subclass_convnd_as_in_pytorch() -> None:
    torch = pytest.importorskip("torch")
    from torch.nn.modules.conv import _ConvNd as TorchConvNd

    for transposed in (False, True):
        ours, theirs = _subclassed(_ConvNd)(transposed), _subclassed(TorchConvNd)(transposed)
        assert tuple(ours.weight.shape) == tuple(theirs.weight.shape)
        assert ours.transposed == theirs.transposed and ours.output_padding == (1, 1)
        assert tuple(ours.bias.shape) == tuple(theirs.bias.shape) == (6,)
        ours.weight.data = tl.tensor(theirs.weight.detach().numpy())
        ours.bias.data = tl.tensor(theirs.bias.detach().numpy())
        x = np.random.default_rng(0).normal(size=(1, 4, 5, 5)).astype(np.float32)
        run = ((tl.nn.functional.conv_transpose2d, torch.nn.functional.conv_transpose2d)
               if transposed else (tl.nn.functional.conv2d, torch.nn.functional.conv2d))
        extra = ((ours.output_padding,), (theirs.output_padding,)) if transposed else ((), ())
        y_ours = run[0](tl.tensor(x), ours.weight, ours.bias, ours.stride, ours.padding,
                        *extra[0], ours.groups, ours.dilation) if transposed else run[0](
            tl.tensor(x), ours.weight, ours.bias, ours.stride, ours.padding, ours.dilation,
            ours.groups)
        y_theirs = run[1](torch.tensor(x), theirs.weight, theirs.bias, theirs.stride,
                          theirs.padding, *extra[1], theirs.groups, theirs.dilation) if transposed \
            else run[1](torch.tensor(x), theirs.weight, theirs.bias, theirs.stride, theirs.padding,
                        theirs.dilation, theirs.groups)
        np.testing.assert_allclose(y_ours.detach().numpy(), y_theirs.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported'):
        _ConvNd(4, 6, (3, 3), 1, 0, 1, True, 0, 1, True, "reflect")


@pytest.mark.parity
def test_a_program_can_subclass_maxpoolnd_as_in_pytorch() -> None:
    torch = pytest.importorskip("torch")
    from torch.nn.modules.pooling import _MaxPoolNd as TorchMaxPoolNd

    for base, lib in ((_MaxPoolNd, tl), (TorchMaxPoolNd, torch)):
        class MyPool(base):
            functional = lib.nn.functional

            def forward(self, x):
                return self.functional.max_pool2d(x, self.kernel_size, self.stride, self.padding,
                                                  self.dilation, self.ceil_mode,
                                                  self.return_indices)

        pool = MyPool(3, padding=1, ceil_mode=True)
        assert (pool.kernel_size, pool.stride, pool.padding, pool.dilation, pool.return_indices,
                pool.ceil_mode) == (3, 3, 1, 1, False, True)
        assert tuple(pool(lib.ones(1, 1, 7, 7)).shape) == (1, 1, 3, 3)


@pytest.mark.parity
def test_a_one_element_kernel_size_is_refused_by_the_2d_and_3d_layers() -> None:
    torch = pytest.importorskip("torch")
    for name in ("Conv2d", "Conv3d", "ConvTranspose2d", "ConvTranspose3d"):
        layer = getattr(torch.nn, name)(1, 1, (3,))  # PyTorch: a 1-D kernel, then forward fails
        with pytest.raises(RuntimeError):
            layer(torch.ones((1, 1) + (5,) * (3 if "3d" in name else 2)))
        with pytest.raises(RuntimeError, match=r"kernel_size must be an int or a tuple of \d ints"):
            getattr(nn, name)(1, 1, (3,))
    assert nn.Conv1d(1, 1, (3,)).kernel_size == (3,)
    assert nn.Conv2d(1, 1, 3, stride=(2,)).stride == (2, 2)  # the other sizes: one serves all


# The printed form lives on the bases, as in PyTorch: a program's own subclass prints its settings
_CONV_BASE_ARGS = [
    (4, 6, (3, 3), (1, 1), (0, 0), (1, 1), False, (0, 0), 1, True, "zeros"),
    (4, 6, (3,), (2,), (1,), (2,), False, (0,), 2, False, "reflect"),
    (4, 6, (3, 3), (1, 1), "same", (1, 1), False, (0, 0), 1, True, "circular"),
    (4, 6, (3, 2, 3), (2, 1, 2), (1, 0, 1), (1, 1, 1), True, (1, 0, 1), 2, True, "zeros"),
]


@pytest.mark.parity
@pytest.mark.parametrize("args", _CONV_BASE_ARGS)
def test_a_subclass_of_convnd_prints_as_in_pytorch(args) -> None:
    torch = pytest.importorskip("torch")
    ours = type("MyConv", (_ConvNd,), {})(*args)
    theirs = type("MyConv", (torch.nn.modules.conv._ConvNd,), {})(*args)
    assert repr(ours) == repr(theirs)
    assert repr(ours).startswith("MyConv(4, 6, kernel_size=")


@pytest.mark.parity
def test_subclasses_of_the_pooling_bases_print_as_in_pytorch() -> None:
    torch = pytest.importorskip("torch")
    pooling = torch.nn.modules.pooling
    for args in ((3,), ((2, 3), 1, (1, 0), 2, True, True)):
        ours = type("MyPool", (_MaxPoolNd,), {})(*args)
        theirs = type("MyPool", (pooling._MaxPoolNd,), {})(*args)
        assert repr(ours) == repr(theirs)

    def average(base):
        class MyAverage(base):
            def __init__(self) -> None:
                super().__init__()
                self.kernel_size, self.stride, self.padding = 3, (2, 1), 1
                self.ceil_mode, self.count_include_pad = True, False

        return MyAverage()

    assert repr(average(_AvgPoolNd)) == repr(average(pooling._AvgPoolNd))
    assert repr(average(_AvgPoolNd)) == "MyAverage(kernel_size=3, stride=(2, 1), padding=1)"


@pytest.mark.parity
@pytest.mark.parametrize("name, args, options", [
    ("Conv1d", (2, 4, 3), dict(stride=2, padding=1, dilation=2, bias=False)),
    ("Conv2d", (2, 4, 3), dict(padding="same", padding_mode="reflect", groups=2)),
    ("Conv2d", (2, 4, (3, 1)), {}),
    ("Conv3d", (2, 4, 2), dict(stride=(1, 2, 1), padding=1)),
    ("ConvTranspose1d", (2, 4, 3), dict(stride=2, output_padding=1)),
    ("ConvTranspose2d", (2, 4, 3), dict(stride=2, padding=1, output_padding=(1, 0), groups=2)),
    ("ConvTranspose3d", (2, 4, 2), dict(dilation=2, bias=False)),
    ("LazyConv2d", (4, 3), dict(padding=1)),
    ("MaxPool1d", (3,), dict(stride=2, dilation=2)),
    ("MaxPool2d", ((3, 2),), dict(padding=1, ceil_mode=True, return_indices=True)),
    ("MaxPool3d", (2,), {}),
    ("AvgPool1d", (3,), dict(stride=2, padding=1, count_include_pad=False)),
    ("AvgPool2d", ((3, 2),), dict(divisor_override=2)),
    ("AvgPool3d", (2,), dict(ceil_mode=True)),
])
def test_the_layers_print_as_in_pytorch(name, args, options) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(nn, name)(*args, **options), getattr(torch.nn, name)(*args, **options)
    assert repr(ours) == repr(theirs)
