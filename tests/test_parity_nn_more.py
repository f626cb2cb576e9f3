"""Parity with PyTorch of the layers chapter 4 added beyond its first library: PyTorch's other
activation modules (section 8.1), and the convolution, pooling, normalisation and resampling
layers of the later sections.

As in ``tests/test_parity_nn.py``: each layer is built in tensorlib, its parameters are given
random values and copied to the matching torch layer, both run forward and backward with the same
input and the same random cotangent, and the output and every gradient are compared, in float32
and float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity
TF = torch.nn.functional

TOLERANCES = {
    np.float32: dict(rtol=2e-4, atol=2e-5),
    np.float64: dict(rtol=1e-9, atol=1e-11),
}
TORCH_DTYPE = {np.float32: torch.float32, np.float64: torch.float64}
DTYPES = [pytest.param(np.float32, id="float32"), pytest.param(np.float64, id="float64")]


def to_numpy(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x.numpy())


def normal(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


def run_both(ours, theirs, inputs, dtype, seed=0, tol=None):
    """Give ``ours`` random parameters, copy them into ``theirs``, run both forward and backward
    on ``inputs`` (numpy arrays, all differentiated) and compare outputs and all gradients.

    ``ours`` and ``theirs`` are modules or plain callables (functional forms)."""
    rng = np.random.default_rng(seed)
    tol = TOLERANCES[dtype] if tol is None else tol
    ours_params = dict(ours.named_parameters()) if isinstance(ours, nn.Module) else {}
    theirs_params = dict(theirs.named_parameters()) if isinstance(theirs, torch.nn.Module) else {}
    assert list(ours_params) == list(theirs_params)
    if isinstance(ours, nn.Module):
        ours.to(dtype)
        theirs.to(TORCH_DTYPE[dtype])
        for name, p in ours_params.items():
            values = rng.standard_normal(tuple(p.shape)).astype(dtype)
            with tl.no_grad():
                p.copy_(tl.tensor(values))
            with torch.no_grad():
                theirs_params[name].copy_(torch.from_numpy(values.copy()))
    xs_ours = [tl.tensor(a.astype(dtype), requires_grad=True) for a in inputs]
    xs_theirs = [torch.tensor(a.astype(dtype), requires_grad=True) for a in inputs]
    out_ours, out_theirs = ours(*xs_ours), theirs(*xs_theirs)
    assert tuple(out_ours.shape) == tuple(out_theirs.shape)
    assert to_numpy(out_ours).dtype == dtype
    np.testing.assert_allclose(to_numpy(out_ours), to_numpy(out_theirs), **tol, err_msg="output")
    cotangent = rng.standard_normal(tuple(out_theirs.shape)).astype(dtype)
    (out_ours * tl.tensor(cotangent)).sum().backward()
    (out_theirs * torch.from_numpy(cotangent)).sum().backward()
    for i, (a, b) in enumerate(zip(xs_ours, xs_theirs, strict=True)):
        np.testing.assert_allclose(to_numpy(a.grad), to_numpy(b.grad), **tol, err_msg=f"grad {i}")
    for name, p in ours_params.items():
        np.testing.assert_allclose(
            to_numpy(p.grad), to_numpy(theirs_params[name].grad), **tol, err_msg=f"{name} grad"
        )


# ----------------------------------------------------------------------------- activations

ACTIVATIONS = [
    ("LeakyReLU", (), {}),
    ("LeakyReLU", (0.2,), {"inplace": True}),
    ("ELU", (), {}),
    ("ELU", (0.7,), {}),
    ("CELU", (1.5,), {}),
    ("SELU", (), {}),
    ("Threshold", (0.1, -2.0), {}),
    ("Softplus", (), {}),
    ("Softplus", (2.0, 1.0), {}),
    ("Hardtanh", (), {}),
    ("Hardtanh", (-0.5, 2.0), {}),
    ("ReLU6", (), {}),
    ("Hardsigmoid", (), {}),
    ("Hardswish", (), {}),
    ("Mish", (), {}),
    ("LogSigmoid", (), {}),
    ("Softsign", (), {}),
    ("Tanhshrink", (), {}),
    ("Softshrink", (), {}),
    ("Softshrink", (1.0,), {}),
    ("Hardshrink", (0.3,), {}),
    ("GLU", (), {}),
    ("GLU", (1,), {}),
    ("Softmin", (1,), {}),
    ("PReLU", (), {}),
    ("PReLU", (6,), {"init": 0.1}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "name, args, kwargs", ACTIVATIONS, ids=[f"{a[0]}{a[1]}{a[2]}" for a in ACTIVATIONS]
)
def test_activation_modules(dtype, name, args, kwargs):
    ours = getattr(nn, name)(*args, **kwargs)
    assert repr(ours) == repr(getattr(torch.nn, name)(*args, **kwargs))
    # torch's in-place form refuses a leaf that requires grad; ours computes out of place
    theirs = getattr(torch.nn, name)(*args, **{k: v for k, v in kwargs.items() if k != "inplace"})
    x = normal(1, 2, 6, 4) * 3
    x[0, 0, :3] = [0.0, 6.0, -3.0]  # the kinks of ReLU6, Hardsigmoid, Hardswish
    # torch's float64 hardsigmoid backward multiplies by 1/6 rounded to float32 (a relative
    # error of 3e-8); ours is exact
    tol = dict(rtol=1e-7, atol=1e-11) if name == "Hardsigmoid" and dtype is np.float64 else None
    run_both(ours, theirs, [x], dtype, tol=tol)


def test_prelu_initial_weight_and_state_dict_match():
    ours, theirs = nn.PReLU(4, init=0.3), torch.nn.PReLU(4, init=0.3)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_array_equal(to_numpy(ours.weight), to_numpy(theirs.weight))
    assert ours.weight.dtype == tl.float32


@pytest.mark.parametrize("dtype", DTYPES)
def test_rrelu_in_evaluation_matches_torch(dtype):
    ours = nn.RReLU(0.1, 0.3).eval()
    theirs = torch.nn.RReLU(0.1, 0.3).eval()
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(2, 3, 5)], dtype)


def test_activations_in_a_sequential_match_torch():
    names = ["LeakyReLU", "ELU", "Mish", "Hardswish", "SELU"]
    ours = nn.Sequential(nn.Linear(4, 6), *[getattr(nn, n)() for n in names], nn.Linear(6, 2))
    theirs = torch.nn.Sequential(
        torch.nn.Linear(4, 6), *[getattr(torch.nn, n)() for n in names], torch.nn.Linear(6, 2)
    )
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(3, 5, 4)], np.float64)


# ----------------------------------------------------------------------------- convolutions

CONV1D_CASES = [  # (in, out, kernel, keyword arguments), input length
    ((3, 4, 3, {}), 9),
    ((4, 6, 3, {"stride": 2, "padding": 1, "groups": 2}), 10),
    ((2, 3, 4, {"dilation": 2, "padding": "same"}), 8),
    ((2, 2, 5, {"stride": 3, "padding": 2, "dilation": 2, "bias": False}), 13),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args, length", CONV1D_CASES)
def test_conv1d(dtype, args, length):
    cin, cout, k, kwargs = args
    ours, theirs = nn.Conv1d(cin, cout, k, **kwargs), torch.nn.Conv1d(cin, cout, k, **kwargs)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(4, 2, cin, length)], dtype)


CONV_TRANSPOSE_CASES = [  # (in, out, kernel, keyword arguments), input spatial size
    ((3, 4, 3, {}), (4, 5)),
    ((4, 6, 3, {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}), (3, 4)),
    ((2, 3, (2, 3), {"stride": (2, 1), "dilation": (1, 2), "output_padding": (1, 1)}), (3, 3)),
    ((2, 2, 4, {"stride": 3, "padding": 2, "dilation": 2, "bias": False}), (4, 2)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args, size", CONV_TRANSPOSE_CASES)
def test_conv_transpose2d(dtype, args, size):
    cin, cout, k, kwargs = args
    ours = nn.ConvTranspose2d(cin, cout, k, **kwargs)
    theirs = torch.nn.ConvTranspose2d(cin, cout, k, **kwargs)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(5, 2, cin, *size)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args, size", CONV_TRANSPOSE_CASES)
def test_conv_transpose1d(dtype, args, size):
    cin, cout, k, kwargs = args
    one = {key: (v[0] if isinstance(v, tuple) else v) for key, v in kwargs.items()}
    k = k[0] if isinstance(k, tuple) else k
    ours = nn.ConvTranspose1d(cin, cout, k, **one)
    theirs = torch.nn.ConvTranspose1d(cin, cout, k, **one)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(6, 2, cin, size[0])], dtype)


def test_conv_transpose2d_output_size_and_unbatched_match_torch():
    ours = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1).double()
    theirs = torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(to_numpy(ours.weight)))
        theirs.bias.copy_(torch.from_numpy(to_numpy(ours.bias)))
    x = normal(7, 3, 4, 5)
    for size in [None, (8, 10), (7, 9), [2, 8, 9]]:
        a = ours(tl.tensor(x), output_size=size)
        b = theirs(torch.from_numpy(x), output_size=size)
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="output size"):
        ours(tl.tensor(x), output_size=(10, 10))
    with pytest.raises(ValueError, match="2 or 3 elements"):
        ours(tl.tensor(x), output_size=(1, 2, 8, 9))


@pytest.mark.parametrize("dtype", DTYPES)
def test_functional_convolutions_match_torch(dtype):
    x, w, b = normal(8, 2, 4, 7), normal(9, 6, 2, 3), normal(10, 6)
    run_both(
        lambda x, w, b: tl.nn.functional.conv1d(x, w, b, 2, 1, 1, 2),
        lambda x, w, b: TF.conv1d(x, w, b, 2, 1, 1, 2),
        [x, w, b], dtype,
    )
    wt = normal(11, 4, 3, 3)
    run_both(
        lambda x, w, b: tl.nn.functional.conv_transpose1d(x, w, b, 2, 1, 1, 2, 1),
        lambda x, w, b: TF.conv_transpose1d(x, w, b, 2, 1, 1, 2, 1),
        [x, wt, b], dtype,
    )
    x2, wt2 = normal(12, 2, 4, 3, 5), normal(13, 4, 3, 2, 3)
    run_both(
        lambda x, w, b: tl.nn.functional.conv_transpose2d(x, w, b, (2, 1), (1, 0), (1, 0), 2, 2),
        lambda x, w, b: TF.conv_transpose2d(x, w, b, (2, 1), (1, 0), (1, 0), 2, 2),
        [x2, wt2, b], dtype,
    )


# ----------------------------------------------------------------------------- pooling

POOL1D_CASES = [  # (kernel, stride, padding, dilation, ceil_mode), length
    ((2, None, 0, 1, False), 9),
    ((3, 2, 1, 1, False), 10),
    ((3, 2, 1, 2, True), 11),
    ((4, 3, 2, 1, True), 12),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args, length", POOL1D_CASES)
def test_max_pool1d(dtype, args, length):
    *positional, ceil_mode = args
    ours = nn.MaxPool1d(*positional, ceil_mode=ceil_mode)
    theirs = torch.nn.MaxPool1d(*positional, ceil_mode=ceil_mode)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(14, 2, 3, length)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args, length", POOL1D_CASES)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool1d(dtype, args, length, count_include_pad):
    kernel, stride, padding, _, ceil_mode = args
    ours = nn.AvgPool1d(kernel, stride, padding, ceil_mode, count_include_pad)
    theirs = torch.nn.AvgPool1d(kernel, stride, padding, ceil_mode, count_include_pad)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(15, 2, 3, length)], dtype)


ADAPTIVE_2D = [
    ((7, 5), (3, 2)), ((6, 6), 3), ((5, 9), (1, 1)), ((4, 3), (5, 4)), ((7, 6), (None, 4)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size, out", ADAPTIVE_2D)
@pytest.mark.parametrize("kind", ["AdaptiveAvgPool2d", "AdaptiveMaxPool2d"])
def test_adaptive_pool2d(dtype, kind, size, out):
    ours, theirs = getattr(nn, kind)(out), getattr(torch.nn, kind)(out)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(16, 2, 3, *size)], dtype)
    run_both(ours, theirs, [normal(17, 3, *size)], dtype)  # unbatched


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("length, out", [(11, 4), (8, 4), (3, 5), (7, 1)])
def test_adaptive_avg_pool1d(dtype, length, out):
    ours, theirs = nn.AdaptiveAvgPool1d(out), torch.nn.AdaptiveAvgPool1d(out)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(18, 2, 3, length)], dtype)


def test_adaptive_max_pool2d_ties_and_functional_forms_match_torch():
    x = np.zeros((1, 2, 5, 5))
    x[0, 1, 1:4, 1:4] = 1.0  # ties inside overlapping windows
    run_both(lambda x: tl.nn.functional.adaptive_max_pool2d(x, 3),
             lambda x: TF.adaptive_max_pool2d(x, 3), [x], np.float64)
    run_both(lambda x: tl.nn.functional.adaptive_avg_pool1d(x, 2),
             lambda x: TF.adaptive_avg_pool1d(x, 2), [normal(19, 2, 5)], np.float64)
    run_both(lambda x: tl.nn.functional.max_pool1d(x, 3, 1, 1, 1, True),
             lambda x: TF.max_pool1d(x, 3, 1, 1, 1, True), [normal(20, 2, 3, 6)], np.float64)
    run_both(lambda x: tl.nn.functional.avg_pool1d(x, 3, 2, 1, False, False),
             lambda x: TF.avg_pool1d(x, 3, 2, 1, False, False), [normal(21, 2, 6)], np.float64)


def test_max_pool_modules_take_return_indices_before_ceil_mode_as_torch():
    for ours, theirs in [
        (nn.MaxPool1d(3, 2, 1, 1, False, True), torch.nn.MaxPool1d(3, 2, 1, 1, False, True)),
        (nn.MaxPool2d(3, 2, 1, 1, False, True), torch.nn.MaxPool2d(3, 2, 1, 1, False, True)),
    ]:
        assert repr(ours) == repr(theirs) and ours.ceil_mode
    run_both(nn.MaxPool2d(3, 2, 1, 1, False, True), torch.nn.MaxPool2d(3, 2, 1, 1, False, True),
             [normal(22, 2, 3, 6, 7)], np.float64)
    values, indices = nn.MaxPool2d(2, return_indices=True)(tl.zeros(1, 2, 4, 4))
    assert values.shape == indices.shape == (1, 2, 2, 2) and indices.dtype == tl.int64


# ----------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("groups, channels, shape, affine", [
    (1, 4, (3, 5), True), (2, 4, (3, 5), True), (4, 4, (3, 5), True), (3, 6, (7,), False),
    (2, 6, (), True),
])
def test_group_norm(dtype, groups, channels, shape, affine):
    ours = nn.GroupNorm(groups, channels, affine=affine)
    theirs = torch.nn.GroupNorm(groups, channels, affine=affine)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(23, 2, channels, *shape) * 3 + 1], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind, shape", [
    ("InstanceNorm1d", (2, 3, 7)), ("InstanceNorm1d", (3, 7)),
    ("InstanceNorm2d", (2, 3, 4, 5)), ("InstanceNorm2d", (3, 4, 5)),
])
@pytest.mark.parametrize("affine, track", [(False, False), (True, False), (True, True)])
def test_instance_norm_training_and_eval(dtype, kind, shape, affine, track):
    ours = getattr(nn, kind)(3, affine=affine, track_running_stats=track)
    theirs = getattr(torch.nn, kind)(3, affine=affine, track_running_stats=track)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(24, *shape) * 2 - 1], dtype)
    if track:
        for name in ("running_mean", "running_var"):
            np.testing.assert_allclose(
                to_numpy(getattr(ours, name)), to_numpy(getattr(theirs, name)),
                **TOLERANCES[dtype], err_msg=name,
            )
        assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.eval(), theirs.eval()
    ours.zero_grad(), theirs.zero_grad()
    run_both(ours, theirs, [normal(25, *shape)], dtype, seed=1)


def test_functional_norms_match_torch():
    x, w, b = normal(26, 2, 6, 5), normal(27, 6), normal(28, 6)
    run_both(lambda x, w, b: tl.nn.functional.group_norm(x, 3, w, b, 1e-3),
             lambda x, w, b: TF.group_norm(x, 3, w, b, 1e-3), [x, w, b], np.float64)
    run_both(lambda x, w, b: tl.nn.functional.instance_norm(x, weight=w, bias=b, eps=1e-3),
             lambda x, w, b: TF.instance_norm(x, weight=w, bias=b, eps=1e-3), [x, w, b],
             np.float64)


# ----------------------------------------------------------------------------- padding, shuffle

PAD_LAYERS = [
    ("ZeroPad1d", (2,), (2, 3, 5)), ("ZeroPad2d", ((1, 2, 0, 3),), (2, 3, 4, 5)),
    ("ConstantPad1d", ((1, 0), 3.5), (3, 5)), ("ConstantPad2d", (1, -1.0), (2, 3, 4, 5)),
    ("ReflectionPad1d", ((3, 1),), (2, 3, 5)), ("ReflectionPad1d", (2,), (3, 5)),
    ("ReflectionPad2d", ((1, 2, 3, 0),), (2, 3, 4, 5)), ("ReflectionPad2d", (2,), (3, 4, 5)),
    ("ReplicationPad1d", ((3, 1),), (2, 3, 5)), ("ReplicationPad2d", ((4, 0, 1, 5),), (2, 3, 4, 5)),
    ("CircularPad1d", ((5, 2),), (2, 3, 5)), ("CircularPad2d", ((1, 2, 4, 3),), (2, 3, 4, 5)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, args, shape", PAD_LAYERS, ids=[f"{p[0]}{p[1]}" for p in PAD_LAYERS])
def test_padding_layers(dtype, name, args, shape):
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(29, *shape)], dtype)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("widths, shape", [
    ((1, 2), (2, 4)), ((1, 2, 2, 1), (2, 3, 4)), ((1, 0, 2, 1, 0, 2), (1, 2, 3, 4, 3)),
])
def test_pad_modes_match_torch(mode, widths, shape):
    run_both(lambda x: tl.nn.functional.pad(x, widths, mode),
             lambda x: TF.pad(x, widths, mode), [normal(30, *shape)], np.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("factor, shape", [(2, (2, 8, 3, 4)), (3, (9, 2, 2)), (2, (2, 1, 4, 1, 2))])
def test_pixel_shuffle_and_unshuffle(dtype, factor, shape):
    ours, theirs = nn.PixelShuffle(factor), torch.nn.PixelShuffle(factor)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(31, *shape)], dtype)
    small = (*shape[:-3], shape[-3] // factor**2, shape[-2] * factor, shape[-1] * factor)
    ours, theirs = nn.PixelUnshuffle(factor), torch.nn.PixelUnshuffle(factor)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(32, *small)], dtype)


def test_unflatten_matches_torch():
    ours, theirs = nn.Unflatten(1, (3, 4)), torch.nn.Unflatten(1, (3, 4))
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(33, 2, 12, 5)], np.float64)
    run_both(nn.Unflatten(-1, [2, -1]), torch.nn.Unflatten(-1, [2, -1]), [normal(34, 3, 8)],
             np.float64)


# ----------------------------------------------------------------------------- resampling

INTERPOLATE_CASES = [  # shape, keyword arguments
    ((2, 3, 4, 5), dict(scale_factor=2)),
    ((2, 3, 4, 5), dict(scale_factor=1.5)),
    ((2, 3, 7, 5), dict(size=(3, 11))),
    ((2, 3, 6, 5), dict(size=(4, 5), mode="nearest-exact")),
    ((2, 3, 5, 7), dict(scale_factor=(0.6, 1.7), mode="nearest-exact")),
    ((2, 3, 4, 5), dict(scale_factor=2, mode="bilinear")),
    ((2, 3, 4, 5), dict(scale_factor=2, mode="bilinear", align_corners=True)),
    ((2, 3, 7, 6), dict(size=(3, 10), mode="bilinear")),
    ((2, 3, 7, 6), dict(size=(1, 10), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 4), dict(scale_factor=(1.7, 0.6), mode="bilinear")),
    ((2, 3, 5, 4), dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 9), dict(size=4, mode="linear")),
    ((2, 3, 4), dict(scale_factor=3, mode="linear", align_corners=True)),
    ((2, 3, 9), dict(scale_factor=0.5)),
    ((2, 3, 7, 5), dict(size=(3, 2), mode="area")),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, kwargs", INTERPOLATE_CASES)
def test_interpolate_matches_torch(dtype, shape, kwargs):
    run_both(lambda x: tl.nn.functional.interpolate(x, **kwargs),
             lambda x: TF.interpolate(x, **kwargs), [normal(35, *shape)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make", [
    lambda nn: nn.Upsample(scale_factor=2),
    lambda nn: nn.Upsample(size=(6, 9), mode="bilinear"),
    lambda nn: nn.Upsample(scale_factor=(2, 3), mode="bilinear", align_corners=True),
    lambda nn: nn.UpsamplingNearest2d(scale_factor=3),
    lambda nn: nn.UpsamplingBilinear2d(size=7),
])
def test_upsample_modules(dtype, make):
    ours, theirs = make(nn), make(torch.nn)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(36, 2, 3, 4, 5)], dtype)


# ----------------------------------------------------------------------------- containers


def test_parameter_containers_match_torch_names_and_state_dict():
    values = [normal(37, 2, 3), normal(38, 4)]
    ours = nn.ParameterList([tl.tensor(v) for v in values])
    theirs = torch.nn.ParameterList([torch.from_numpy(v) for v in values])
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    table = {"b": normal(39, 3), "a": normal(40, 1, 2)}
    ours_d = nn.ParameterDict({k: tl.tensor(v) for k, v in table.items()})
    theirs_d = torch.nn.ParameterDict({k: torch.from_numpy(v) for k, v in table.items()})
    assert list(ours_d.keys()) == list(theirs_d.keys()) == ["a", "b"]  # a dict is sorted
    pairs = [("b", tl.zeros(1)), ("a", tl.zeros(1))]
    assert list(nn.ParameterDict(pairs)) == list(torch.nn.ParameterDict(
        [(k, torch.zeros(1)) for k, _ in pairs])) == ["b", "a"]
    assert list(ours_d.state_dict()) == list(theirs_d.state_dict())
    # a torch state_dict loads into the tensorlib container
    ours_d.load_state_dict(theirs_d.state_dict())
    np.testing.assert_array_equal(to_numpy(ours_d["a"]), table["a"])


# ----------------------------------------------------------------------------- small networks


def _encoder_decoder(lib):
    """A ResNet-style encoder ending in global average pooling, and a decoder that upsamples
    with a transposed convolution, interpolation and pixel shuffle: the new layers together."""
    n = lib.nn
    encoder = n.Sequential(
        n.ReflectionPad2d(1), n.Conv2d(3, 8, 3), n.GroupNorm(2, 8), n.LeakyReLU(0.1),
        n.MaxPool2d(2), n.Conv2d(8, 8, 3, padding=1), n.InstanceNorm2d(8, affine=True),
        n.Hardswish(), n.AdaptiveAvgPool2d((1, 1)), n.Flatten(), n.Linear(8, 16),
    )
    decoder = n.Sequential(
        n.Unflatten(1, (4, 2, 2)), n.ConvTranspose2d(4, 8, 3, stride=2, padding=1,
                                                     output_padding=1),
        n.ELU(), n.Upsample(scale_factor=2, mode="bilinear"), n.Conv2d(8, 12, 1),
        n.PixelShuffle(2), n.PReLU(3), n.ZeroPad2d((0, 1, 1, 0)),
    )
    return n.Sequential(encoder, decoder)


@pytest.mark.parametrize("dtype", DTYPES)
def test_an_encoder_decoder_of_the_new_layers_matches_torch(dtype):
    ours, theirs = _encoder_decoder(tl), _encoder_decoder(torch)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(41, 2, 3, 10, 10)], dtype)


def test_a_1d_network_of_the_new_layers_matches_torch():
    def build(lib):
        n = lib.nn
        return n.Sequential(
            n.Conv1d(2, 6, 5, padding="same"), n.BatchNorm1d(6), n.Mish(), n.AvgPool1d(2),
            n.ReplicationPad1d((2, 0)), n.Conv1d(6, 6, 3, groups=3, dilation=2),
            n.InstanceNorm1d(6), n.GLU(1), n.MaxPool1d(2, ceil_mode=True),
            n.ConvTranspose1d(3, 4, 4, stride=2), n.AdaptiveAvgPool1d(5), n.Softplus(2.0),
        )
    ours, theirs = build(tl), build(torch)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, [normal(42, 3, 2, 24)], np.float64)
