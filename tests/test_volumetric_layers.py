"""Chapter 4, sections 9.8 and 10.3: the volumetric layers ``conv3d``/``Conv3d``,
``conv_transpose3d``/``ConvTranspose3d``, ``max_pool3d``/``MaxPool3d``,
``avg_pool3d``/``AvgPool3d``, ``adaptive_avg_pool3d``/``AdaptiveAvgPool3d``, ``BatchNorm3d`` and
``InstanceNorm3d``, and the convolutions' ``padding_mode`` (section 9.7): values and gradients
against PyTorch's in float64, state_dict keys and loading a torch checkpoint, float64 gradchecks
and error messages."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.autograd import gradcheck

F = tl.nn.functional
RTOL, ATOL = 1e-10, 1e-11


def normal(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def run_both(fn, arrays, torch_fn):
    """fn on tensorlib tensors and torch_fn on torch tensors, float64; forward and the backward
    of a random cotangent. Returns (ours, theirs): each the output and the gradients."""
    import torch

    ours_in = [tl.tensor(a, requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    ours, theirs = fn(*ours_in), torch_fn(*theirs_in)
    assert tuple(ours.shape) == tuple(theirs.shape)
    cotangent = normal(99, *ours.shape)
    ours.backward(tl.tensor(cotangent))
    theirs.backward(torch.tensor(cotangent))
    return (
        [ours.numpy()] + [t.grad.numpy() for t in ours_in],
        [theirs.detach().numpy()] + [t.grad.numpy() for t in theirs_in],
    )


def assert_same(ours, theirs):
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


CONV_CASES = [  # input shape, weight shape, keyword arguments
    ((2, 3, 5, 6, 7), (4, 3, 3, 3, 3), {}),
    ((2, 4, 6, 5, 7), (6, 2, 3, 2, 3), dict(stride=2, padding=1, groups=2)),
    ((1, 2, 7, 6, 5), (3, 2, 2, 3, 2),
     dict(stride=(1, 2, 3), padding=(2, 1, 0), dilation=(2, 1, 2))),
    ((2, 3, 5, 6, 4), (3, 3, 2, 3, 4), dict(padding="same")),
    ((2, 3, 5, 6, 4), (3, 1, 3, 3, 3), dict(padding="same", dilation=2, groups=3)),
    ((2, 3, 5, 6, 4), (2, 3, 3, 3, 3), dict(padding="valid")),
    ((3, 5, 6, 4), (2, 3, 3, 2, 3), dict(padding=1)),  # unbatched
]


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("x_shape, w_shape, options", CONV_CASES)
@pytest.mark.parametrize("with_bias", [True, False])
def test_conv3d_matches_pytorch(x_shape, w_shape, options, with_bias):
    import torch

    arrays = [normal(1, *x_shape), normal(2, *w_shape)]
    arrays += [normal(3, w_shape[0])] if with_bias else []
    ours, theirs = run_both(
        lambda *t: F.conv3d(*t, **options), arrays,
        lambda *t: torch.nn.functional.conv3d(*t, **options),
    )
    assert_same(ours, theirs)


TRANSPOSED_CASES = [  # input shape, weight shape, keyword arguments
    ((2, 3, 3, 4, 2), (3, 2, 3, 3, 3), {}),
    ((2, 4, 3, 2, 4), (4, 3, 2, 3, 2), dict(stride=2, padding=1, output_padding=1, groups=2)),
    ((1, 2, 4, 3, 3), (2, 2, 3, 2, 2), dict(stride=(1, 2, 3), padding=(1, 0, 1),
                                            output_padding=(0, 1, 2), dilation=(2, 1, 1))),
    ((3, 2, 3, 4), (3, 2, 2, 2, 2), dict(stride=2)),  # unbatched
]


@pytest.mark.parity
@pytest.mark.parametrize("x_shape, w_shape, options", TRANSPOSED_CASES)
def test_conv_transpose3d_matches_pytorch(x_shape, w_shape, options):
    import torch

    groups = options.get("groups", 1)
    arrays = [normal(4, *x_shape), normal(5, *w_shape), normal(6, w_shape[1] * groups)]
    ours, theirs = run_both(
        lambda *t: F.conv_transpose3d(*t, **options), arrays,
        lambda *t: torch.nn.functional.conv_transpose3d(*t, **options),
    )
    assert_same(ours, theirs)


POOL_CASES = [  # kernel_size, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False),
    (3, 2, 1, 1, False),
    ((2, 3, 2), (1, 2, 2), (1, 1, 0), 1, True),
    (3, 2, 1, 1, True),
    ((3, 2, 2), 1, 0, (1, 2, 2), False),
]


@pytest.mark.parity
@pytest.mark.parametrize("kernel, stride, padding, dilation, ceil_mode", POOL_CASES)
@pytest.mark.parametrize("shape", [(2, 3, 6, 5, 7), (3, 5, 6, 5)])
def test_max_pool3d_matches_pytorch(kernel, stride, padding, dilation, ceil_mode, shape):
    import torch

    ours, theirs = run_both(
        lambda x: F.max_pool3d(x, kernel, stride, padding, dilation, ceil_mode),
        [normal(7, *shape)],
        lambda x: torch.nn.functional.max_pool3d(x, kernel, stride, padding, dilation, ceil_mode),
    )
    assert_same(ours, theirs)


@pytest.mark.parity
def test_max_pool3d_ties_go_to_the_first_maximum_as_in_pytorch():
    import torch

    x = np.round(normal(8, 2, 2, 4, 4, 4))  # many ties
    ours, theirs = run_both(lambda t: F.max_pool3d(t, 2, 1), [x],
                            lambda t: torch.nn.functional.max_pool3d(t, 2, 1))
    assert_same(ours, theirs)


@pytest.mark.parity
@pytest.mark.parametrize("kernel, stride, padding, _, ceil_mode", POOL_CASES[:4])
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool3d_matches_pytorch(kernel, stride, padding, _, ceil_mode, count_include_pad):
    import torch

    ours, theirs = run_both(
        lambda x: F.avg_pool3d(x, kernel, stride, padding, ceil_mode, count_include_pad),
        [normal(9, 2, 3, 6, 5, 7)],
        lambda x: torch.nn.functional.avg_pool3d(x, kernel, stride, padding, ceil_mode,
                                                 count_include_pad),
    )
    assert_same(ours, theirs)


@pytest.mark.parity
@pytest.mark.parametrize("shape, size", [
    ((2, 3, 5, 7, 4), (2, 3, 4)), ((2, 3, 6, 6, 6), 3), ((3, 5, 4, 9), (None, 2, 1)),
    ((1, 2, 3, 2, 5), (4, 5, 2)), ((2, 1, 4, 5, 6), 1),
])
def test_adaptive_avg_pool3d_matches_pytorch(shape, size):
    import torch

    ours, theirs = run_both(lambda x: F.adaptive_avg_pool3d(x, size), [normal(10, *shape)],
                            lambda x: torch.nn.functional.adaptive_avg_pool3d(x, size))
    assert_same(ours, theirs)


MODULES = [  # (tensorlib class, torch name, arguments, keyword arguments, input shape)
    (nn.Conv3d, "Conv3d", (4, 6, 3), dict(stride=2, padding=1, groups=2), (2, 4, 5, 6, 7)),
    (nn.Conv3d, "Conv3d", (3, 2, (2, 3, 1)), dict(bias=False, dilation=(2, 1, 1)), (1, 3, 5, 4, 4)),
    (nn.Conv3d, "Conv3d", (3, 2, 3), dict(padding="same"), (2, 3, 4, 5, 3)),
    (nn.ConvTranspose3d, "ConvTranspose3d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1,
                                                          groups=2), (2, 4, 3, 2, 3)),
    (nn.MaxPool3d, "MaxPool3d", (3,), dict(stride=2, padding=1, ceil_mode=True), (2, 3, 5, 6, 7)),
    (nn.AvgPool3d, "AvgPool3d", (3, 2, 1), dict(count_include_pad=False), (2, 3, 5, 6, 7)),
    (nn.AdaptiveAvgPool3d, "AdaptiveAvgPool3d", ((2, None, 3),), {}, (2, 3, 5, 6, 7)),
    (nn.BatchNorm3d, "BatchNorm3d", (3,), {}, (2, 3, 4, 3, 5)),
    (nn.BatchNorm3d, "BatchNorm3d", (3,), dict(momentum=None, affine=False), (2, 3, 4, 3, 5)),
    (nn.InstanceNorm3d, "InstanceNorm3d", (3,), dict(affine=True, track_running_stats=True),
     (2, 3, 4, 3, 5)),
    (nn.InstanceNorm3d, "InstanceNorm3d", (3,), {}, (3, 4, 3, 5)),
]


@pytest.mark.parity
@pytest.mark.parametrize("cls, torch_name, args, options, shape", MODULES)
def test_modules_match_pytorch_in_repr_state_dict_values_and_gradients(
    cls, torch_name, args, options, shape
):
    import torch

    ours = cls(*args, **options, dtype=tl.float64) if cls not in (
        nn.MaxPool3d, nn.AvgPool3d, nn.AdaptiveAvgPool3d) else cls(*args, **options)
    theirs = getattr(torch.nn, torch_name)(*args, **options).double()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():  # random parameters, same in both
        if value.is_floating_point():
            value.copy_(torch.tensor(normal(len(key), *value.shape)))
    ours.load_state_dict(theirs.state_dict())  # a torch checkpoint loads directly
    x = normal(11, *shape)
    x_ours, x_theirs = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    for _ in range(2):  # two training steps: BatchNorm's running estimates move
        y_ours, y_theirs = ours(x_ours), theirs(x_theirs)
    cotangent = normal(12, *y_ours.shape)
    y_ours.backward(tl.tensor(cotangent))
    y_theirs.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(y_ours.numpy(), y_theirs.detach().numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(x_ours.grad.numpy(), x_theirs.grad.numpy(), rtol=RTOL, atol=ATOL)
    named = dict(theirs.named_parameters())
    for name, param in ours.named_parameters():
        np.testing.assert_allclose(param.grad.numpy(), named[name].grad.numpy(), rtol=RTOL,
                                   atol=ATOL)
    for (name, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items(),
                                 strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=RTOL, atol=ATOL, err_msg=name)
    ours.eval(), theirs.eval()
    np.testing.assert_allclose(ours(tl.tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=RTOL, atol=ATOL)


@pytest.mark.parity
@pytest.mark.parametrize("cls, torch_name, args", [
    (nn.Conv3d, "Conv3d", (4, 6, (3, 2, 1))), (nn.ConvTranspose3d, "ConvTranspose3d", (4, 6, 3)),
])
def test_initial_values_follow_pytorchs_bounds(cls, torch_name, args):
    import torch

    ours = cls(*args, groups=2, generator=tl.Generator(0))
    theirs = getattr(torch.nn, torch_name)(*args, groups=2)
    assert ours.weight.shape == tuple(theirs.weight.shape) and ours.weight.dtype == tl.float32
    fan_in = theirs.weight.shape[1] * int(np.prod(theirs.weight.shape[2:]))
    bound = 1 / np.sqrt(fan_in)
    weight, bias = ours.weight.numpy(), ours.bias.numpy()
    assert 0.9 * bound < np.abs(weight).max() <= bound and np.abs(bias).max() <= bound


def test_output_size_picks_the_output_padding():
    layer = nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1)
    x = tl.zeros(1, 2, 4, 4, 4)
    assert tuple(layer(x).shape) == (1, 3, 7, 7, 7)
    assert tuple(layer(x, output_size=(8, 7, 8)).shape) == (1, 3, 8, 7, 8)
    with pytest.raises(ValueError, match="valid sizes along dimension 0 range from 7 to 8"):
        layer(x, output_size=(9, 7, 7))


def test_gradchecks():
    g = tl.Generator(3)
    x = tl.randn(2, 4, 4, 3, 5, generator=g, dtype=tl.float64, requires_grad=True)
    w = tl.randn(4, 2, 2, 2, 3, generator=g, dtype=tl.float64, requires_grad=True)
    b = tl.randn(4, generator=g, dtype=tl.float64, requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv3d(x, w, b, (2, 1, 1), (1, 0, 1), groups=2), (x, w, b))
    assert gradcheck(lambda x, w: F.conv3d(x, w, None, padding="same", dilation=(1, 2, 1),
                                           groups=2), (x, w))
    assert gradcheck(lambda x, w, b: F.conv_transpose3d(x, w, b[:4], 2, 1, (1, 0, 1), 2), (x, w, b))
    assert gradcheck(lambda x: F.max_pool3d(x, (2, 3, 2), 2, 1, ceil_mode=True), (x,))
    assert gradcheck(lambda x: F.avg_pool3d(x, 3, 2, 1, True, False), (x,))
    assert gradcheck(lambda x: F.adaptive_avg_pool3d(x, (3, 2, 4)), (x,))
    bn = nn.BatchNorm3d(4, dtype=tl.float64)
    assert gradcheck(lambda x: bn(x), (x,))
    inorm = nn.InstanceNorm3d(4, affine=True, dtype=tl.float64)
    assert gradcheck(lambda x: inorm(x), (x,))


def test_node_names():
    x = tl.randn(1, 2, 3, 3, 3, requires_grad=True)
    assert F.conv3d(x, tl.randn(2, 2, 2, 2, 2)).grad_fn.name() == "Conv3dBackward"
    assert F.conv2d(x[:, :, 0], tl.randn(2, 2, 2, 2)).grad_fn.name() == "Conv2dBackward"
    assert F.conv_transpose3d(x, tl.randn(2, 1, 2, 2, 2)).grad_fn.name() == (
        "ConvTranspose3dBackward"
    )
    assert F.max_pool3d(x, 2).grad_fn.name() == "MaxPool3dBackward"
    assert F.avg_pool3d(x, 2).grad_fn.name() == "AvgPool3dBackward"


@pytest.mark.parametrize("call, error, message", [
    (lambda: F.conv3d(tl.zeros(2, 3, 3), tl.zeros(1, 2, 2, 2, 2)), ValueError,
     r"conv3d: expected a 4-D \(C, D, H, W\) or 5-D \(N, C, D, H, W\) input, got shape"),
    (lambda: F.conv3d(tl.zeros(1, 2, 3, 3, 3), tl.zeros(1, 2, 2, 2)), ValueError,
     r"conv3d: weight must be 5-D \(out_channels, in_channels/groups, kd, kh, kw\)"),
    (lambda: F.conv3d(tl.zeros(1, 3, 3, 3, 3), tl.zeros(1, 2, 2, 2, 2)), ValueError,
     "conv3d: input of shape .* has 3 channels, but weight .* with groups=1 expects 2"),
    (lambda: F.conv3d(tl.zeros(1, 2, 3, 3, 3), tl.zeros(1, 2, 2, 2, 2), stride=(1, 2)), TypeError,
     r"stride must be an int or a triple of ints, got \(1, 2\)"),
    (lambda: F.conv3d(tl.zeros(1, 2, 3, 3, 3), tl.zeros(1, 2, 2, 2, 2), padding="same",
                      stride=2), ValueError, "conv3d: padding='same' is not supported"),
    (lambda: F.conv3d(tl.zeros(1, 2, 3, 3, 3), tl.zeros(1, 2, 2, 2, 2), padding="full"),
     ValueError, "conv3d: invalid padding string 'full'"),
    (lambda: F.conv3d(tl.zeros(1, 2, 3, 1, 3), tl.zeros(1, 2, 2, 2, 2)), ValueError,
     "conv3d: input of spatial size .* is smaller than the kernel"),
    (lambda: F.conv3d([[1.0]], tl.zeros(1, 2, 2, 2, 2)), TypeError, "conv3d: expected a Tensor"),
    (lambda: F.conv3d(tl.zeros(1, 2, 3, 3, 3, dtype=tl.float64), tl.zeros(1, 2, 2, 2, 2)),
     TypeError, "conv3d"),
    (lambda: F.conv_transpose3d(tl.zeros(1, 2, 3, 3, 3), tl.zeros(2, 1, 2, 2, 2),
                                output_padding=2, stride=2), ValueError,
     "conv_transpose3d: stride and dilation must be >= 1, padding >= 0 and output_padding"),
    (lambda: F.conv_transpose3d(tl.zeros(2, 3, 3), tl.zeros(2, 1, 2, 2, 2)), ValueError,
     "conv_transpose3d: expected a 4-D or 5-D input and a 5-D weight"),
    (lambda: F.max_pool3d(tl.zeros(2, 4, 4), 2, padding=0), ValueError,
     r"max_pool3d: expected a 4-D \(C, D, H, W\) or 5-D"),
    (lambda: F.max_pool3d(tl.zeros(1, 2, 4, 4, 4), 2, padding=2), ValueError,
     "max_pool3d: padding .* should be at most half of the kernel size"),
    (lambda: F.avg_pool3d(tl.zeros(1, 2, 4, 4, 4, dtype=tl.int64), 2), TypeError, "avg_pool3d"),
    (lambda: F.adaptive_avg_pool3d(tl.zeros(1, 2, 4, 4), (1, 1)), ValueError,
     "adaptive_avg_pool3d: output_size must have 3 entries"),
    (lambda: F.adaptive_avg_pool3d(tl.zeros(2, 4), 1), ValueError,
     "adaptive_avg_pool3d: expected a 4-D or 5-D input"),
    (lambda: nn.Conv3d(3, 4, 3, groups=2), ValueError, "must both be divisible by groups=2"),
    (lambda: nn.Conv3d(3, 4, (3, 3)), TypeError, "kernel_size must be an int or a triple"),
    (lambda: nn.Conv3d(3, 4, 3, padding="full"), ValueError, "Conv3d: invalid padding string"),
    (lambda: nn.BatchNorm3d(2)(tl.zeros(2, 2, 3, 3)), ValueError, r"expected 5D input \(got 4D"),
    (lambda: nn.InstanceNorm3d(2)(tl.zeros(2, 3, 3)), ValueError,
     r"InstanceNorm3d: expected 4D or 5D input \(got 3D input\)"),
])
def test_errors_name_the_problem(call, error, message):
    with pytest.raises(error, match=message):
        call()


PADDING_MODE_CASES = [  # (class name, arguments, keyword arguments, input shape)
    ("Conv1d", (3, 4, 3), dict(padding=2), (2, 3, 7)),
    ("Conv1d", (3, 4, 4), dict(padding="same", dilation=2), (3, 9)),
    ("Conv2d", (3, 4, 3), dict(padding=(2, 1), stride=2), (2, 3, 6, 5)),
    ("Conv2d", (4, 2, (2, 3)), dict(padding="same", groups=2), (2, 4, 5, 6)),
    ("Conv3d", (2, 4, 3), dict(padding=1, groups=2), (2, 2, 4, 5, 3)),
    ("Conv3d", (2, 3, (2, 3, 2)), dict(padding="same", bias=False), (2, 4, 5, 3)),
]


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "zeros"])
@pytest.mark.parametrize("name, args, options, shape", PADDING_MODE_CASES)
def test_padding_mode_matches_pytorch(name, args, options, shape, mode):
    import torch

    ours = getattr(nn, name)(*args, **options, padding_mode=mode, dtype=tl.float64)
    theirs = getattr(torch.nn, name)(*args, **options, padding_mode=mode).double()
    assert repr(ours) == repr(theirs)
    theirs.load_state_dict({k: torch.tensor(normal(len(k), *v.shape))
                            for k, v in theirs.state_dict().items()})
    ours.load_state_dict(theirs.state_dict())
    x = normal(13, *shape)
    x_ours, x_theirs = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y_ours, y_theirs = ours(x_ours), theirs(x_theirs)
    cotangent = normal(14, *y_ours.shape)
    y_ours.backward(tl.tensor(cotangent))
    y_theirs.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(y_ours.numpy(), y_theirs.detach().numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(x_ours.grad.numpy(), x_theirs.grad.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=RTOL,
                               atol=ATOL)


def test_padding_mode_gradcheck_and_errors():
    g = tl.Generator(4)
    x = tl.randn(1, 2, 4, 3, 5, generator=g, dtype=tl.float64, requires_grad=True)
    layer = nn.Conv3d(2, 2, 3, padding=(1, 2, 1), padding_mode="reflect", dtype=tl.float64)
    assert gradcheck(lambda x: layer(x), (x,))
    with pytest.raises(ValueError, match="padding_mode must be one of 'zeros', 'reflect', "
                                         "'replicate', 'circular', but got padding_mode='mirror'"):
        nn.Conv3d(2, 2, 3, padding_mode="mirror")
    for cls in (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d):
        with pytest.raises(ValueError, match=f'Only "zeros" padding mode is supported for '
                                             f'{cls.__name__}'):
            cls(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="pad: mode 'reflect' needs widths below the size"):
        nn.Conv2d(1, 1, 3, padding=3, padding_mode="reflect")(tl.zeros(1, 1, 3, 3))
