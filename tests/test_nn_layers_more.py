"""The layers chapter 4 added beyond its first library (PyTorch's other activation modules,
section 8.1, and the later sections' layers): values against numpy definitions, float64
gradchecks, and the error messages for bad input.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.autograd import gradcheck


def randn(*shape, seed=0, requires_grad=True):
    return tl.tensor(
        np.random.default_rng(seed).standard_normal(shape), requires_grad=requires_grad
    )


# ----------------------------------------------------------------------------- activations

SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
ELEMENTWISE = [
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    (nn.CELU(2.0), lambda x: np.where(x > 0, x, 2.0 * np.expm1(x / 2.0))),
    (nn.SELU(), lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))),
    (nn.Threshold(0.1, 5.0), lambda x: np.where(x > 0.1, x, 5.0)),
    (nn.Softplus(2.0), lambda x: np.log1p(np.exp(2.0 * x)) / 2.0),
    (nn.Hardtanh(-0.5, 2.0), lambda x: np.clip(x, -0.5, 2.0)),
    (nn.ReLU6(), lambda x: np.clip(x, 0.0, 6.0)),
    (nn.Hardsigmoid(), lambda x: np.clip(x + 3, 0, 6) / 6),
    (nn.Hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (nn.Mish(), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (nn.LogSigmoid(), lambda x: -np.log1p(np.exp(-x))),
    (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    (nn.Softshrink(0.4), lambda x: np.where(x > 0.4, x - 0.4, np.where(x < -0.4, x + 0.4, 0))),
    (nn.Hardshrink(0.4), lambda x: np.where(np.abs(x) > 0.4, x, 0.0)),
    (nn.PReLU(), lambda x: np.where(x > 0, x, 0.25 * x)),
    (nn.RReLU(0.1, 0.3).eval(), lambda x: np.where(x > 0, x, 0.2 * x)),
]


@pytest.mark.parametrize("layer, definition", ELEMENTWISE, ids=[repr(e[0]) for e in ELEMENTWISE])
def test_activation_values_and_gradients(layer, definition):
    x = randn(3, 4, 5, seed=1) * 3
    expected = definition(x.numpy())
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-6, atol=1e-7)
    layer.double()
    # keep the sample points away from the kinks (0, +-0.4, 0.1, -3, 3, 6, -0.5, 2)
    x = tl.tensor(np.round(x.numpy(), 1) + 0.05, requires_grad=True)
    assert gradcheck(layer, (x,))


def test_glu_and_softmin():
    x = randn(2, 6, 3, seed=2)
    a, b = x.numpy()[:, :3], x.numpy()[:, 3:]
    np.testing.assert_allclose(nn.GLU(1)(x).numpy(), a / (1 + np.exp(-b)), rtol=1e-12)
    e = np.exp(-x.numpy())
    np.testing.assert_allclose(
        nn.Softmin(2)(x).numpy(), e / e.sum(axis=2, keepdims=True), rtol=1e-12
    )
    assert gradcheck(nn.GLU(1), (x,)) and gradcheck(nn.Softmin(0), (x,))
    with pytest.raises(RuntimeError, match="even"):
        nn.GLU()(x)
    with pytest.warns(UserWarning, match="Implicit dimension"):
        nn.Softmin()(x)


def test_prelu_parameter_and_gradient():
    layer = nn.PReLU(3, init=0.1, dtype=tl.float64)
    assert [name for name, _ in layer.named_parameters()] == ["weight"]
    assert layer.weight.numpy().tolist() == [0.1, 0.1, 0.1]
    x = randn(2, 3, 4, seed=3)
    assert gradcheck(lambda x, w: tl.nn.functional.prelu(x, w), (x, layer.weight))
    layer(x).sum().backward()
    expected = (x.numpy() * (x.numpy() <= 0)).sum(axis=(0, 2))
    np.testing.assert_allclose(layer.weight.grad.numpy(), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="3 entries.*4 channels"):
        layer(randn(2, 4, 4))
    with pytest.raises(TypeError, match="floating dtype"):
        nn.PReLU(dtype=tl.int64)


def test_rrelu_draws_slopes_in_training_mode():
    layer = nn.RReLU(0.2, 0.4)
    tl.manual_seed(0)
    x = tl.tensor(np.r_[-np.ones(3000), np.ones(5), 0.0], requires_grad=True)
    y = layer(x)
    slopes = -y.detach().numpy()[:3000]
    assert 0.2 <= slopes.min() and slopes.max() <= 0.4
    assert abs(slopes.mean() - 0.3) < 0.01 and abs(slopes.std() - 0.2 / np.sqrt(12)) < 0.005
    np.testing.assert_array_equal(y.detach().numpy()[3000:], np.r_[np.ones(5), 0.0])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[:3000], slopes)
    np.testing.assert_array_equal(x.grad.numpy()[3000:3005], np.ones(5))
    assert 0.2 <= x.grad.numpy()[-1] <= 0.4  # at 0, the drawn slope, as PyTorch's kernel
    tl.manual_seed(0)
    np.testing.assert_array_equal(layer(x).detach().numpy(), y.detach().numpy())  # seeded
    assert layer.eval()(tl.tensor([-1.0])).item() == pytest.approx(-0.3)


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="min_val"):
        nn.Hardtanh(2.0, 1.0)
    with pytest.raises(ValueError, match="lambd"):
        nn.Softshrink(-1.0)
    with pytest.raises(ValueError, match="lower"):
        nn.RReLU(0.5, 0.1)
    with pytest.raises(TypeError, match="Tensor"):
        nn.Mish()(np.zeros(3))


def test_relu6_is_a_hardtanh():
    layer = nn.ReLU6(inplace=True)
    assert isinstance(layer, nn.Hardtanh) and (layer.min_val, layer.max_val) == (0.0, 6.0)
    assert repr(layer) == "ReLU6(inplace=True)"


# ----------------------------------------------------------------------------- convolutions


def test_conv1d_is_conv2d_on_a_height_1_image():
    x, w, b = randn(2, 4, 9, seed=4), randn(6, 2, 3, seed=5), randn(6, seed=6)
    ours = tl.nn.functional.conv1d(x, w, b, stride=2, padding=1, groups=2)
    image = tl.nn.functional.conv2d(
        x.unsqueeze(2), w.unsqueeze(2), b, (1, 2), (0, 1), groups=2
    ).squeeze(2)
    np.testing.assert_allclose(ours.numpy(), image.numpy(), rtol=1e-12)
    assert gradcheck(lambda x, w, b: tl.nn.functional.conv1d(x, w, b, 2, 1, 1, 2), (x, w, b))
    unbatched = tl.nn.functional.conv1d(x[0], w, b, 2, 1, 1, 2)
    np.testing.assert_allclose(unbatched.numpy(), ours.numpy()[0], rtol=1e-12)


@pytest.mark.parametrize("stride, padding, output_padding, dilation, groups", [
    (1, 0, 0, 1, 1), (2, 1, 1, 1, 2), (3, 2, 2, 2, 1), (2, 0, 1, 3, 1),
])
def test_conv_transpose2d_is_the_adjoint_of_conv2d(stride, padding, output_padding, dilation,
                                                   groups):
    z, w = randn(2, 4, 3, 4, seed=7), randn(4, 6 // groups, 3, 2, seed=8)
    y = tl.nn.functional.conv_transpose2d(z, w, None, stride, padding, output_padding, groups,
                                          dilation)
    expected = [(n - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1
                for n, k in zip((3, 4), (3, 2), strict=True)]
    assert tuple(y.shape) == (2, 6, *expected)
    x = randn(*y.shape, seed=9)
    forward = tl.nn.functional.conv2d(x, w, None, stride, padding, dilation, groups)
    assert tuple(forward.shape) == tuple(z.shape)
    lhs, rhs = (forward.numpy() * z.numpy()).sum(), (x.numpy() * y.numpy()).sum()
    assert lhs == pytest.approx(rhs, rel=1e-12)
    b = randn(6, seed=10)
    assert gradcheck(
        lambda z, w, b: tl.nn.functional.conv_transpose2d(
            z, w, b, stride, padding, output_padding, groups, dilation
        ),
        (z, w, b),
    )


def test_conv_transpose_modules_shapes_and_parameters():
    layer = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
    assert tuple(layer.weight.shape) == (4, 3, 3, 3) and tuple(layer.bias.shape) == (6,)
    bound = 1 / np.sqrt(3 * 9)
    assert np.abs(layer.weight.numpy()).max() <= bound
    assert tuple(layer(tl.zeros(2, 4, 5, 5)).shape) == (2, 6, 10, 10)
    assert tuple(layer(tl.zeros(4, 5, 5)).shape) == (6, 10, 10)
    one = nn.ConvTranspose1d(2, 3, 4, stride=2, bias=False)
    assert one.bias is None and tuple(one(tl.zeros(1, 2, 5)).shape) == (1, 3, 12)
    assert tuple(nn.Conv1d(2, 3, 3, padding="same")(tl.zeros(1, 2, 7)).shape) == (1, 3, 7)


def test_convolution_errors():
    F = tl.nn.functional
    with pytest.raises(ValueError, match="3-D weight"):
        F.conv1d(randn(1, 2, 5), randn(3, 2, 1, 1))
    with pytest.raises(ValueError, match="2 channels.*expects 3"):
        F.conv1d(randn(1, 2, 5), randn(3, 3, 1))
    with pytest.raises(ValueError, match="output_padding"):
        F.conv_transpose2d(randn(1, 2, 3, 3), randn(2, 1, 3, 3), stride=2, output_padding=2)
    with pytest.raises(ValueError, match="2 channels.*expects 3"):
        F.conv_transpose2d(randn(1, 2, 3, 3), randn(3, 1, 3, 3))
    with pytest.raises(ValueError, match="bias must have shape"):
        F.conv_transpose2d(randn(1, 2, 3, 3), randn(2, 1, 3, 3), randn(2))
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.ConvTranspose2d(3, 4, 3, groups=2)
    with pytest.raises(TypeError, match="1-tuple"):
        nn.Conv1d(2, 3, (3, 3))
    with pytest.raises(ValueError, match="padding='same'"):
        nn.Conv1d(2, 3, 3, stride=2, padding="same")


# ----------------------------------------------------------------------------- pooling


def adaptive_by_definition(x, out_h, out_w, reduce):
    h, w = x.shape[-2:]
    y = np.zeros(x.shape[:-2] + (out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            rows = slice(i * h // out_h, -(-(i + 1) * h // out_h))
            cols = slice(j * w // out_w, -(-(j + 1) * w // out_w))
            y[..., i, j] = reduce(x[..., rows, cols], axis=(-2, -1))
    return y


@pytest.mark.parametrize("size, out", [((7, 5), (3, 2)), ((4, 4), (4, 4)), ((3, 2), (4, 5))])
def test_adaptive_pooling_by_definition_and_gradcheck(size, out):
    F = tl.nn.functional
    x = randn(2, 3, *size, seed=11)
    avg, mx = F.adaptive_avg_pool2d(x, out), F.adaptive_max_pool2d(x, out)
    np.testing.assert_allclose(avg.numpy(), adaptive_by_definition(x.numpy(), *out, np.mean),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(mx.numpy(), adaptive_by_definition(x.numpy(), *out, np.max))
    assert gradcheck(lambda x: F.adaptive_avg_pool2d(x, out), (x,))
    assert gradcheck(lambda x: F.adaptive_max_pool2d(x, out), (x,))


def test_global_average_pooling_is_the_mean():
    x = randn(2, 3, 5, 7, seed=12)
    y = nn.AdaptiveAvgPool2d((1, 1))(x)
    np.testing.assert_allclose(y.numpy(), x.numpy().mean(axis=(2, 3), keepdims=True), rtol=1e-12)
    one = nn.AdaptiveAvgPool1d(1)(x[:, :, 0])
    np.testing.assert_allclose(one.numpy()[..., 0], x.numpy()[:, :, 0].mean(axis=-1), rtol=1e-12)


def test_pool1d_is_pool2d_on_a_height_1_image():
    F = tl.nn.functional
    x = randn(2, 3, 10, seed=13)
    np.testing.assert_array_equal(
        F.max_pool1d(x, 3, 2, 1).numpy(), F.max_pool2d(x.unsqueeze(2), (1, 3), (1, 2), (0, 1))
        .squeeze(2).numpy()
    )
    assert gradcheck(lambda x: F.avg_pool1d(x, 3, 2, 1, True, False), (x,))
    assert gradcheck(lambda x: F.max_pool1d(x, 2, 1, 1, 2), (x,))
    assert tuple(nn.MaxPool1d(2)(x[0]).shape) == (3, 5)


def test_pooling_errors():
    F = tl.nn.functional
    with pytest.raises(ValueError, match="3-D"):
        F.max_pool1d(randn(2, 3, 4, 5), 2)
    with pytest.raises(TypeError, match="floating-point"):
        F.adaptive_avg_pool2d(tl.zeros(1, 2, 3, 3, dtype=tl.int64), 1)
    with pytest.raises(ValueError, match="output_size must have 2 entries"):
        F.adaptive_avg_pool2d(randn(1, 2, 3, 3), (1, 2, 3))
    with pytest.raises(ValueError, match="positive"):
        F.adaptive_max_pool2d(randn(1, 2, 3, 3), 0)
    with pytest.raises(ValueError, match="4-D"):
        F.adaptive_avg_pool2d(randn(3, 3), 1)
    values, indices = nn.AdaptiveMaxPool2d(2, return_indices=True)(randn(1, 2, 3, 3))
    assert values.shape == indices.shape == (1, 2, 2, 2) and indices.dtype == tl.int64


# ----------------------------------------------------------------------------- normalisation


def test_group_norm_by_definition_and_gradcheck():
    x, w, b = randn(2, 6, 3, 2, seed=14), randn(6, seed=15), randn(6, seed=16)
    y = tl.nn.functional.group_norm(x, 3, w, b, eps=1e-5).numpy()
    grouped = x.numpy().reshape(2, 3, -1)
    normalised = (grouped - grouped.mean(axis=2, keepdims=True)) / np.sqrt(
        grouped.var(axis=2, keepdims=True) + 1e-5
    )
    expected = normalised.reshape(x.shape) * w.numpy()[:, None, None] + b.numpy()[:, None, None]
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x, w, b: tl.nn.functional.group_norm(x, 3, w, b), (x, w, b))


def test_instance_norm_running_estimates_and_modes():
    layer = nn.InstanceNorm1d(3, momentum=0.5, track_running_stats=True, dtype=tl.float64)
    x = randn(4, 3, 6, seed=17, requires_grad=False)
    layer(x)
    values = x.numpy()
    np.testing.assert_allclose(
        layer.running_mean.numpy(), 0.5 * values.mean(axis=(0, 2)), rtol=1e-12
    )
    np.testing.assert_allclose(
        layer.running_var.numpy(), 0.5 + 0.5 * values.var(axis=2, ddof=1).mean(axis=0),
        rtol=1e-12,
    )
    assert layer.num_batches_tracked.item() == 0  # as PyTorch: instance norm does not count
    default = nn.InstanceNorm2d(3)
    assert default.weight is None and default.running_mean is None
    y = default.eval()(randn(2, 3, 4, 4, seed=18))
    np.testing.assert_allclose(y.numpy().mean(axis=(2, 3)), 0, atol=1e-12)
    assert gradcheck(lambda x: tl.nn.functional.instance_norm(x), (randn(2, 3, 5, seed=19),))


def test_normalisation_errors():
    with pytest.raises(ValueError, match="divisible by num_groups"):
        nn.GroupNorm(4, 6)
    with pytest.raises(ValueError, match="divisible by num_groups"):
        tl.nn.functional.group_norm(randn(2, 6, 3), 4)
    with pytest.raises(ValueError, match="expected 3D or 4D input"):
        nn.InstanceNorm2d(3)(randn(2, 3, 4, 4, 1))
    with pytest.raises(ValueError, match="num_features"):
        nn.InstanceNorm1d(4, affine=True)(randn(2, 3, 5))
    with pytest.warns(UserWarning, match="num_features"):
        nn.InstanceNorm1d(4)(randn(2, 3, 5))
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        tl.nn.functional.instance_norm(randn(2, 3, 1))


# ----------------------------------------------------------------------------- padding, shuffle


@pytest.mark.parametrize("mode, numpy_mode", [
    ("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap"),
])
def test_pad_modes_against_numpy_and_gradcheck(mode, numpy_mode):
    x = randn(2, 3, 4, 5, seed=20)
    y = tl.nn.functional.pad(x, (2, 1, 0, 3), mode)
    expected = np.pad(x.numpy(), ((0, 0), (0, 0), (0, 3), (2, 1)), mode=numpy_mode)
    np.testing.assert_array_equal(y.numpy(), expected)
    assert gradcheck(lambda x: tl.nn.functional.pad(x, (2, 1, 0, 3), mode), (x,))


def test_pad_mode_errors():
    F = tl.nn.functional
    with pytest.raises(ValueError, match="widths below the size of the padded dimension"):
        F.pad(randn(1, 2, 3), (3, 0), "reflect")
    with pytest.raises(ValueError, match="widths at most the size left after cropping"):
        F.pad(randn(1, 2, 3), (4, 0), "circular")
    with pytest.raises(NotImplementedError, match="last 1, 2 or 3 dimensions"):
        F.pad(randn(5), (1, 1), "replicate")
    with pytest.raises(ValueError, match="unknown mode"):
        F.pad(randn(1, 5), (1, 1), "mirror")
    with pytest.raises(TypeError, match="4 ints"):
        nn.ReflectionPad2d((1, 2))


def test_pixel_shuffle_definition_and_inverse():
    F = tl.nn.functional
    x = randn(2, 12, 2, 3, seed=21)
    y = F.pixel_shuffle(x, 2)
    assert tuple(y.shape) == (2, 3, 4, 6)
    for c, i, j in [(0, 0, 0), (1, 1, 0), (2, 1, 1), (2, 0, 1)]:
        np.testing.assert_array_equal(y.numpy()[:, c, i::2, j::2], x.numpy()[:, c * 4 + i * 2 + j])
    np.testing.assert_array_equal(F.pixel_unshuffle(y, 2).numpy(), x.numpy())
    assert gradcheck(lambda x: F.pixel_shuffle(x, 2), (x,))
    with pytest.raises(RuntimeError, match="C \\* 4"):
        F.pixel_shuffle(randn(1, 6, 2, 2), 2)
    with pytest.raises(ValueError, match="positive int"):
        nn.PixelUnshuffle(0)(x)


def test_unflatten_inverts_flatten():
    x = randn(2, 3, 4, 5, seed=22)
    flat = nn.Flatten()(x)
    np.testing.assert_array_equal(nn.Unflatten(1, (3, 4, 5))(flat).numpy(), x.numpy())
    with pytest.raises(TypeError, match="tuple or list"):
        nn.Unflatten(1, 12)


# ----------------------------------------------------------------------------- resampling


def test_bilinear_is_separable_and_exact_at_the_grid():
    F = tl.nn.functional
    x = randn(2, 3, 4, 5, seed=23)
    # align_corners=True keeps the corners; an integer factor with it keeps every input pixel
    y = F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=True)
    np.testing.assert_allclose(y.numpy()[:, :, ::2, ::2], x.numpy(), rtol=1e-12, atol=1e-12)
    # along one axis at a time is the same as both at once
    rows = F.interpolate(x.movedim(3, 1).reshape(10, 3, 4), size=6, mode="linear")
    assert tuple(rows.shape) == (10, 3, 6)
    assert gradcheck(lambda x: F.interpolate(x, size=(3, 7), mode="bilinear"), (x,))
    assert gradcheck(lambda x: F.interpolate(x, size=(6, 8), mode="nearest-exact"), (x,))


def test_nearest_doubling_copies_each_pixel_four_times():
    x = randn(1, 1, 2, 3, seed=24)
    y = tl.nn.functional.interpolate(x, scale_factor=2)
    np.testing.assert_array_equal(y.numpy(), x.numpy().repeat(2, axis=2).repeat(2, axis=3))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((1, 1, 2, 3), 4.0))


def test_interpolate_errors():
    F = tl.nn.functional
    x = randn(1, 2, 3, 3)
    with pytest.raises(ValueError, match="exactly one of size and scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="exactly one of size and scale_factor"):
        F.interpolate(x, size=4, scale_factor=2)
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(NotImplementedError, match=r"\(got 3D\) .* \(got bicubic\)"):
        F.interpolate(randn(1, 2, 3), scale_factor=2, mode="bicubic")
    with pytest.raises(NotImplementedError, match="^Got 4D input, but linear mode needs 3D input$"):
        F.interpolate(x, scale_factor=2, mode="linear")
    with pytest.raises(ValueError, match="2 spatial dimension"):
        F.interpolate(x, size=(2, 3, 4))
    with pytest.raises(TypeError, match="floating-point"):
        F.interpolate(tl.zeros(1, 1, 2, 2, dtype=tl.int64), scale_factor=2)


# ----------------------------------------------------------------------------- containers


def test_parameter_list_registers_and_trains():
    plist = nn.ParameterList([tl.zeros(2), nn.Parameter(np.ones(3))])
    plist.append(tl.ones(1))
    plist += [tl.zeros(4)]
    assert len(plist) == 4 and all(isinstance(p, nn.Parameter) for p in plist)
    assert [n for n, _ in plist.named_parameters()] == ["0", "1", "2", "3"]
    assert isinstance(plist[1:], nn.ParameterList) and len(plist[1:]) == 3
    assert plist[-1] is list(plist)[3]
    plist[0] = tl.ones(2)
    assert plist[0].numpy().tolist() == [1.0, 1.0]
    loss = sum((p * p).sum() for p in plist)
    loss.backward()
    np.testing.assert_array_equal(plist[1].grad.numpy(), 2 * np.ones(3))
    with pytest.raises(IndexError):
        plist[4]
    with pytest.raises(TypeError, match="Parameter or a Tensor"):
        plist.append([1.0])


def test_parameter_dict_is_a_dict_of_parameters():
    assert list(nn.ParameterDict({"z": tl.zeros(1), "y": tl.zeros(1)})) == ["y", "z"]
    pdict = nn.ParameterDict({"a": tl.zeros(2)})
    pdict["b"] = nn.Parameter(np.ones(1))
    pdict.update([("c", tl.ones(3))])
    assert list(pdict) == ["a", "b", "c"] and "b" in pdict and len(pdict) == 3
    assert isinstance(pdict["a"], nn.Parameter) and pdict.get("z") is None
    del pdict["a"]
    assert list(pdict.keys()) == ["b", "c"]
    assert pdict.pop("b").numpy().tolist() == [1.0]
    assert [n for n, _ in pdict.named_parameters()] == ["c"]
    assert "Parameter containing" in repr(pdict)
    pdict.clear()
    assert len(pdict) == 0


# ----------------------------------------------------------------------------- empty inputs

EMPTY_SHAPES = [(2, 4, 0), (0, 4, 3), (0, 4, 0), (2, 4, 0, 0), (2, 4, 0, 3)]
EMPTY_NORMS = {
    "group_norm": lambda L, x, w, b: L.nn.functional.group_norm(x, 2, w, b),
    "instance_norm": lambda L, x, w, b: L.nn.functional.instance_norm(x, weight=w, bias=b),
    "batch_norm": lambda L, x, w, b: L.nn.functional.batch_norm(x, None, None, w, b, True),
    "batch_norm-eval": lambda L, x, w, b: L.nn.functional.batch_norm(
        x, L.zeros(4, dtype=L.float64), L.ones(4, dtype=L.float64), w, b, False
    ),
    "layer_norm": lambda L, x, w, b: L.nn.functional.layer_norm(x, tuple(x.shape[1:])),
    "rms_norm": lambda L, x, w, b: L.nn.functional.rms_norm(x, tuple(x.shape[-1:])),
    "GroupNorm": lambda L, x, w, b: L.nn.GroupNorm(2, 4).double()(x),
    "InstanceNorm": lambda L, x, w, b: (
        L.nn.InstanceNorm1d if x.ndim == 3 else L.nn.InstanceNorm2d
    )(4, track_running_stats=True).double()(x),
}


def _empty_norm_run(lib, name, shape, affine):
    x = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
    w = lib.ones(4, dtype=lib.float64, requires_grad=True) if affine else None
    b = lib.zeros(4, dtype=lib.float64, requires_grad=True) if affine else None
    y = EMPTY_NORMS[name](lib, x, w, b)
    y.sum().backward()
    grads = [None if p is None else p.grad.tolist() for p in (w, b)]
    return tuple(y.shape), str(y.dtype).split(".")[-1], tuple(x.grad.shape), grads


@pytest.mark.parity
@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
@pytest.mark.parametrize("name", list(EMPTY_NORMS))
def test_normalisations_of_an_empty_input_match_torch(name, shape):
    """PyTorch returns an empty result, and the backward runs, for every normalisation of an
    empty input (no sample, no position); the parameters get gradient 0."""
    torch = pytest.importorskip("torch")
    affine = name in ("group_norm", "instance_norm", "batch_norm", "batch_norm-eval")
    # PyTorch's instance_norm with an affine and no sample raises an IndexError from its kernel
    # (weight[0] of a 0-length repeat), and its group_norm gives w a NaN gradient when the
    # samples have no position: accidents we do not copy (chapter 4, section 6.7)
    torch_affine = affine and not (name == "instance_norm" and shape[0] == 0)
    ours = _empty_norm_run(tl, name, shape, affine)
    theirs = _empty_norm_run(torch, name, shape, torch_affine)
    assert ours[:3] == theirs[:3]
    if torch_affine and not (name == "group_norm" and shape[0] > 0):
        assert ours[3] == theirs[3]
    if affine:
        assert ours[3] == [[0.0] * 4, [0.0] * 4]


@pytest.mark.parity
@pytest.mark.parametrize("normalized_shape", [0, (0,), (2, 0)])
def test_layer_and_rms_norm_accept_a_zero_in_normalized_shape_as_torch(normalized_shape):
    torch = pytest.importorskip("torch")
    shape = (3,) + ((normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape)
    for module in ("LayerNorm", "RMSNorm"):
        ours = getattr(nn, module)(normalized_shape, dtype=tl.float64)
        theirs = getattr(torch.nn, module)(normalized_shape, dtype=torch.float64)
        assert tuple(ours.weight.shape) == tuple(theirs.weight.shape)
        x = tl.zeros(shape, dtype=tl.float64, requires_grad=True)
        y = ours(x)
        y.sum().backward()
        assert tuple(y.shape) == tuple(theirs(torch.zeros(shape, dtype=torch.float64)).shape)
        assert tuple(x.grad.shape) == shape and tuple(ours.weight.grad.shape) == shape[1:]


@pytest.mark.parity
def test_empty_batches_leave_the_running_estimates_alone_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        norm = lib.nn.BatchNorm1d(4).double()
        with lib.no_grad():
            norm.running_mean.fill_(0.5)
        for shape in [(2, 4, 0), (0, 4, 3), (0, 4)]:
            norm(lib.zeros(shape, dtype=lib.float64))
        assert norm.running_mean.tolist() == [0.5] * 4 and norm.running_var.tolist() == [1.0] * 4
        assert int(norm.num_batches_tracked) == 3
        instance = lib.nn.InstanceNorm1d(4, track_running_stats=True).double()
        instance(lib.zeros(2, 4, 0, dtype=lib.float64))  # torch too: samples with no position
        assert instance.running_mean.tolist() == [0.0] * 4
    # no sample: PyTorch writes NaN (the mean over no instance); we leave them alone
    instance = nn.InstanceNorm1d(4, track_running_stats=True)
    instance(tl.zeros(0, 4, 3))
    assert instance.running_mean.tolist() == [0.0] * 4
    assert instance.running_var.tolist() == [1.0] * 4


@pytest.mark.parity
@pytest.mark.parametrize("call, shape", [
    (lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True), (1, 0)),
    (lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True), (1, 4, 1)),
    (lambda L, x: L.nn.functional.instance_norm(x), (2, 4, 1)),
    (lambda L, x: L.nn.functional.instance_norm(x), (0, 4)),
], ids=["batch-1x0", "batch-1x4x1", "instance-one-position", "instance-no-spatial"])
def test_a_single_value_is_still_refused_in_training_as_torch(call, shape):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="Expected more than 1"):
        call(torch, torch.zeros(shape))
    with pytest.raises(ValueError, match="(?i)expected more than 1"):
        call(tl, tl.zeros(shape))
