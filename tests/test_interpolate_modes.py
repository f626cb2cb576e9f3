"""``F.interpolate``'s bicubic, trilinear, 5-D and antialiased modes (chapter 4, section 10.2):
parity with PyTorch over many sizes and factors (forward and input gradient, float32 and
float64), float64 gradchecks, ``nn.Upsample`` and the deprecated aliases, and the errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.autograd import gradcheck

F = tl.nn.functional
TOLERANCES = {
    np.float32: dict(rtol=2e-4, atol=2e-5),
    np.float64: dict(rtol=1e-9, atol=1e-11),
}
DTYPES = [pytest.param(np.float32, id="float32"), pytest.param(np.float64, id="float64")]


def _random_cases(mode, antialias, count, seed):
    """``count`` (shape, kwargs) cases for ``mode``: sizes and factors up and down, both
    ``align_corners``, every ``recompute_scale_factor``."""
    rng = np.random.default_rng(seed)
    dims = 3 if mode in ("trilinear",) else 2
    cases = []
    while len(cases) < count:
        shape = tuple(int(n) for n in rng.integers(1, 10, dims))
        kwargs = dict(mode=mode)
        if antialias:
            kwargs["antialias"] = True
        if mode not in ("nearest", "nearest-exact", "area", "lanczos"):
            kwargs["align_corners"] = bool(rng.integers(2))
        if rng.integers(2):
            kwargs["size"] = tuple(int(n) for n in rng.integers(1, 16, dims))
        else:
            factors = tuple(float(f) for f in np.round(rng.uniform(0.2, 3.5, dims), 2))
            if min(math.floor(n * f) for n, f in zip(shape, factors, strict=True)) < 1:
                continue
            kwargs["scale_factor"] = factors
            kwargs["recompute_scale_factor"] = [None, True, False][int(rng.integers(3))]
        cases.append(((2, 3, *shape), kwargs))
    return cases


def _case_id(case):
    shape, kwargs = case
    return f"{shape}-" + "-".join(f"{k}={v}" for k, v in kwargs.items() if k != "mode")


def _cases(mode, antialias, count, seed):
    return [pytest.param(*c, id=f"{mode}{'-aa' if antialias else ''}-{_case_id(c)}")
            for c in _random_cases(mode, antialias, count, seed)]


HAND_CASES = [  # shape, keyword arguments: the edges the random ones may miss
    ((2, 3, 4, 5), dict(scale_factor=2, mode="bicubic")),
    ((2, 3, 4, 5), dict(scale_factor=2, mode="bicubic", align_corners=True)),
    ((2, 3, 9, 7), dict(scale_factor=0.5, mode="bicubic")),
    ((2, 3, 5, 5), dict(scale_factor=1.1, mode="bicubic")),  # size kept, scale still used
    ((2, 3, 1, 1), dict(size=(3, 4), mode="bicubic")),
    ((2, 3, 6, 2), dict(size=(1, 1), mode="bicubic", align_corners=True)),
    ((1, 2, 3, 4, 5), dict(scale_factor=2, mode="trilinear")),
    ((1, 2, 3, 4, 5), dict(size=(5, 2, 9), mode="trilinear", align_corners=True)),
    ((1, 2, 5, 4, 5), dict(scale_factor=(1.1, 0.5, 1.7), mode="trilinear")),
    ((1, 2, 3, 4, 5), dict(scale_factor=1.5, mode="nearest")),
    ((1, 2, 5, 4, 6), dict(scale_factor=(1.15, 2.0, 0.6), mode="nearest")),
    ((1, 2, 3, 4, 5), dict(size=(4, 7, 2), mode="nearest-exact")),
    ((1, 2, 7, 6, 5), dict(size=(3, 4, 2), mode="area")),
    ((1, 2, 7, 6, 5), dict(scale_factor=0.5, mode="area")),
    ((2, 3, 5, 7), dict(scale_factor=(1.15, 1.0), mode="nearest")),  # 2-D keeps the axis
    ((2, 3, 5, 7), dict(scale_factor=(1.15, 1.1), mode="bilinear")),
    ((2, 3, 17, 13), dict(size=(5, 4), mode="bilinear", antialias=True)),
    ((2, 3, 17, 13), dict(size=(5, 4), mode="bilinear", antialias=True, align_corners=True)),
    ((2, 3, 5, 4), dict(size=(11, 9), mode="bilinear", antialias=True, align_corners=True)),
    ((2, 3, 17, 13), dict(scale_factor=0.3, mode="bicubic", antialias=True)),
    ((2, 3, 5, 4), dict(scale_factor=2.5, mode="bicubic", antialias=True)),
    ((2, 3, 5, 5), dict(scale_factor=1.1, mode="bicubic", antialias=True)),
    ((2, 3, 16, 12), dict(size=(7, 3), mode="lanczos", antialias=True)),
    ((2, 3, 4, 5), dict(scale_factor=3, mode="lanczos", antialias=True)),
]

PARITY_CASES = (
    [pytest.param(*c, id=f"hand-{c[1]['mode']}-{_case_id(c)}") for c in HAND_CASES]
    + _cases("bicubic", False, 30, 1)
    + _cases("bilinear", True, 30, 2)
    + _cases("bicubic", True, 30, 3)
    + _cases("lanczos", True, 12, 4)
    + _cases("trilinear", False, 20, 5)
)


def _torch_interpolate(torch, x, kwargs):
    """PyTorch's answer. Its antialiasing kernel is wrong when the output width is 1 and the
    height changes (every row comes out equal to the first; see
    test_torch_channels_first_antialias_bug_is_not_copied): those cases are computed on the
    transposed image, height and width swapped, which the separable resampling allows."""
    out = tuple(_output_size(tuple(x.shape), kwargs))
    interpolate = torch.nn.functional.interpolate
    if not (kwargs.get("antialias") and out[-1] == 1 and out[-2] != x.shape[-2]):
        return interpolate(x, **kwargs)
    swapped = dict(kwargs)
    for key in ("size", "scale_factor"):
        if isinstance(kwargs.get(key), tuple):
            swapped[key] = kwargs[key][::-1]
    return interpolate(x.transpose(2, 3), **swapped).transpose(2, 3)


def _output_size(shape, kwargs):
    if "size" in kwargs:
        return kwargs["size"]
    factors = kwargs["scale_factor"]
    factors = factors if isinstance(factors, tuple) else (factors,) * (len(shape) - 2)
    return tuple(math.floor(n * f) for n, f in zip(shape[2:], factors, strict=True))


@pytest.mark.parity
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, kwargs", PARITY_CASES)
def test_interpolate_matches_torch_forward_and_input_gradient(dtype, shape, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(dtype)
    ours_in = tl.tensor(x, requires_grad=True)
    theirs_in = torch.tensor(x, requires_grad=True)
    ours = F.interpolate(ours_in, **kwargs)
    theirs = _torch_interpolate(torch, theirs_in, kwargs)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.numpy().dtype == dtype
    tol = TOLERANCES[dtype]
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), **tol, err_msg="output")
    if _torch_backward_disagrees(tuple(x.shape), kwargs):
        return  # see test_torch_backward_shortcuts_are_not_copied
    cotangent = rng.standard_normal(tuple(theirs.shape)).astype(dtype)
    (ours * tl.tensor(cotangent)).sum().backward()
    (theirs * torch.from_numpy(cotangent)).sum().backward()
    np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy(), **tol,
                               err_msg="input grad")


def _torch_backward_disagrees(shape, kwargs):
    """PyTorch 2.13's backward is not its forward's transpose (its own gradcheck fails) when an
    axis keeps its size under a scale factor other than 1: plain bicubic's backward copies when
    every size is kept, nearest's (3-D and 5-D) copies such an axis, and the antialiased
    modes' forward copies it but their backward resamples it. Ours is the transpose."""
    if "size" in kwargs or kwargs.get("recompute_scale_factor"):
        return False
    factors = kwargs["scale_factor"]
    factors = factors if isinstance(factors, tuple) else (factors,) * (len(shape) - 2)
    sizes = _output_size(shape, kwargs)
    kept = [out == n and f != 1 for out, n, f in zip(sizes, shape[2:], factors, strict=True)]
    if kwargs.get("antialias") or (kwargs["mode"] == "nearest" and len(shape) in (3, 5)):
        return any(kept)
    return kwargs["mode"] == "bicubic" and tuple(sizes) == tuple(shape[2:]) and any(kept)


@pytest.mark.parity
@pytest.mark.parametrize("shape, kwargs", [
    ((1, 1, 5, 5), dict(scale_factor=1.1, mode="bicubic")),
    ((1, 1, 5, 4, 3), dict(scale_factor=(1.15, 2.0, 0.7), mode="nearest")),
    ((1, 1, 5), dict(scale_factor=1.15, mode="nearest")),
    ((1, 1, 3, 9), dict(scale_factor=(1.18, 1.24), mode="bilinear", antialias=True)),
    ((1, 1, 5, 5), dict(scale_factor=1.1, mode="lanczos", antialias=True)),
])
def test_torch_backward_shortcuts_are_not_copied(shape, kwargs):
    """The forward values agree; ours passes gradcheck where PyTorch's backward disagrees with
    its own forward (if a later PyTorch fixes that, the gradients must agree too)."""
    torch = pytest.importorskip("torch")
    assert _torch_backward_disagrees(shape, kwargs)
    x = np.random.default_rng(13).standard_normal(shape)
    theirs_in = torch.tensor(x, requires_grad=True)
    theirs = torch.nn.functional.interpolate(theirs_in, **kwargs)
    ours_in = tl.tensor(x, requires_grad=True)
    ours = F.interpolate(ours_in, **kwargs)
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x: F.interpolate(x, **kwargs), (ours_in,))
    if torch.autograd.gradcheck(lambda x: torch.nn.functional.interpolate(x, **kwargs),
                                (theirs_in,), raise_exception=False):
        cotangent = np.random.default_rng(14).standard_normal(tuple(theirs.shape))
        (ours * tl.tensor(cotangent)).sum().backward()
        (theirs * torch.tensor(cotangent)).sum().backward()
        np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy(), rtol=1e-12)


@pytest.mark.parity
def test_torch_channels_first_antialias_bug_is_not_copied():
    """PyTorch 2.13, channels-first, W_out = 1 while H changes: every row equals the first.
    Ours equals PyTorch's own two steps, H first (W kept), then W."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(8).standard_normal((2, 3, 7, 3))
    ours = F.interpolate(tl.tensor(x), size=(11, 1), mode="bilinear", antialias=True).numpy()
    tf = torch.nn.functional
    steps = tf.interpolate(tf.interpolate(torch.tensor(x), size=(11, 3), mode="bilinear",
                                          antialias=True), size=(11, 1), mode="bilinear",
                           antialias=True).numpy()
    np.testing.assert_allclose(ours, steps, rtol=1e-12, atol=1e-12)
    assert np.ptp(ours[0, 0]) > 0.1
    at_once = tf.interpolate(torch.tensor(x), size=(11, 1), mode="bilinear",
                             antialias=True).numpy()
    if np.ptp(at_once[0, 0]) > 1e-12:  # the bug is fixed: then PyTorch agrees at once too
        np.testing.assert_allclose(ours, at_once, rtol=1e-12, atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make, shape", [
    (lambda nn: nn.Upsample(scale_factor=2, mode="bicubic"), (2, 3, 4, 5)),
    (lambda nn: nn.Upsample(size=(3, 7), mode="bicubic", align_corners=True), (2, 3, 4, 5)),
    (lambda nn: nn.Upsample(scale_factor=(1.5, 0.5, 2), mode="trilinear"), (1, 2, 4, 6, 3)),
    (lambda nn: nn.Upsample(size=5, mode="trilinear", align_corners=True), (1, 2, 3, 4, 2)),
    (lambda nn: nn.Upsample(scale_factor=2), (1, 2, 3, 4, 2)),
    (lambda nn: nn.Upsample(size=(2, 3, 2), mode="area"), (1, 2, 5, 6, 4)),
    (lambda nn: nn.Upsample(scale_factor=1.7, mode="bicubic", recompute_scale_factor=True),
     (2, 3, 5, 4)),
])
def test_upsample_module_matches_torch(dtype, make, shape):
    torch = pytest.importorskip("torch")
    ours, theirs = make(nn), make(torch.nn)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(9).standard_normal(shape).astype(dtype)
    ours_in, theirs_in = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, z = ours(ours_in), theirs(theirs_in)
    np.testing.assert_allclose(y.numpy(), z.detach().numpy(), **TOLERANCES[dtype])
    y.sum().backward()
    z.sum().backward()
    np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy(), **TOLERANCES[dtype])


@pytest.mark.parity
@pytest.mark.parametrize("name, shape, kwargs", [
    ("upsample", (2, 3, 4, 5), dict(scale_factor=2, mode="bicubic")),
    ("upsample", (2, 3, 4, 5), dict(size=(7, 3), mode="bicubic", align_corners=True)),
    ("upsample", (1, 2, 3, 4, 5), dict(scale_factor=2, mode="trilinear")),
    ("upsample_nearest", (1, 2, 3, 4, 5), dict(scale_factor=2)),
    ("upsample_nearest", (1, 2, 3, 4, 5), dict(size=(4, 7, 2))),
])
def test_deprecated_aliases_take_the_new_modes(name, shape, kwargs):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(10).standard_normal(shape)
    with pytest.warns(UserWarning, match=f"^`nn.functional.{name}` is deprecated"):
        ours = getattr(F, name)(tl.tensor(x), **kwargs).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x), **kwargs).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, kwargs", [
    ((1, 2, 5, 4), dict(scale_factor=1.5, mode="bicubic")),
    ((1, 2, 5, 4), dict(size=(3, 7), mode="bicubic", align_corners=True)),
    ((1, 2, 7, 6), dict(size=(3, 2), mode="bilinear", antialias=True)),
    ((1, 2, 7, 6), dict(size=(3, 9), mode="bicubic", antialias=True)),
    ((1, 2, 7, 6), dict(size=(2, 4), mode="lanczos", antialias=True)),
    ((1, 2, 3, 4, 2), dict(size=(4, 3, 5), mode="trilinear")),
    ((1, 2, 3, 4, 2), dict(size=(4, 3, 5), mode="trilinear", align_corners=True)),
    ((1, 2, 5, 4, 3), dict(size=(2, 3, 2), mode="area")),
    ((1, 2, 3, 4, 2), dict(scale_factor=1.5, mode="nearest")),
])
def test_gradcheck_float64(shape, kwargs):
    x = tl.randn(*shape, generator=tl.Generator(11), dtype=tl.float64, requires_grad=True)
    assert gradcheck(lambda x: F.interpolate(x, **kwargs), (x,))


def test_bicubic_rows_sum_to_one_and_constant_images_stay_constant():
    x = tl.full((1, 1, 4, 6), 3.0, dtype=tl.float64)
    for kwargs in (dict(scale_factor=2.3, mode="bicubic"),
                   dict(size=(2, 3), mode="bicubic", antialias=True),
                   dict(size=(9, 2), mode="lanczos", antialias=True)):
        np.testing.assert_allclose(F.interpolate(x, **kwargs).numpy(), 3.0, rtol=1e-12)


def test_a_kept_size_returns_a_new_tensor():
    x = tl.randn(1, 2, 3, 4, generator=tl.Generator(12))
    y = F.interpolate(x, size=(3, 4), mode="bilinear")
    assert y is not x
    np.testing.assert_array_equal(y.numpy(), x.numpy())


# PyTorch 2.13's messages, written out
ERRORS = [
    (dict(shape=(1, 1, 4), mode="bicubic"), NotImplementedError,
     "Input Error: Only 3D, 4D and 5D input Tensors supported (got 3D) for the modes: nearest | "
     "linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got bicubic)"),
    (dict(shape=(1, 1, 2, 4, 4), mode="bicubic"), NotImplementedError,
     "Input Error: Only 3D, 4D and 5D input Tensors supported (got 5D) for the modes: nearest | "
     "linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got bicubic)"),
    (dict(shape=(1, 1, 4, 4), mode="cubic"), NotImplementedError,
     "Input Error: Only 3D, 4D and 5D input Tensors supported (got 4D) for the modes: nearest | "
     "linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got cubic)"),
    (dict(shape=(1, 1, 1, 2, 2, 2), mode="nearest"), NotImplementedError,
     "Input Error: Only 3D, 4D and 5D input Tensors supported (got 6D) for the modes: nearest | "
     "linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got nearest)"),
    (dict(shape=(1, 1, 4, 4), mode="trilinear"), NotImplementedError,
     "Got 4D input, but trilinear mode needs 5D input"),
    (dict(shape=(1, 1, 4), mode="trilinear"), NotImplementedError,
     "Got 3D input, but trilinear mode needs 5D input"),
    (dict(shape=(1, 1, 2, 4, 4), mode="bilinear"), NotImplementedError,
     "Got 5D input, but bilinear mode needs 4D input"),
    (dict(shape=(1, 1, 4, 4), mode="linear"), NotImplementedError,
     "Got 4D input, but linear mode needs 3D input"),
    (dict(shape=(1, 1, 4, 4), mode="nearest", antialias=True), ValueError,
     "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
     "4-D tensor as input"),
    (dict(shape=(1, 1, 2, 4, 4), mode="trilinear", antialias=True), ValueError,
     "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
     "4-D tensor as input"),
    (dict(shape=(1, 1, 4), mode="bilinear", antialias=True), ValueError,
     "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
     "4-D tensor as input"),
    (dict(shape=(1, 1, 4, 4), mode="lanczos"), ValueError, "Lanczos mode requires antialias=True"),
    (dict(shape=(1, 1, 4, 4), mode="lanczos", antialias=True, align_corners=True), ValueError,
     "Lanczos mode does not support align_corners=True"),
    (dict(shape=(1, 1, 2, 4, 4), mode="area", align_corners=False), ValueError,
     "align_corners option can only be set with the interpolating modes: "
     "linear | bilinear | bicubic | trilinear"),
    (dict(shape=(1, 1, 4, 4), mode="bicubic", size=(2, 2), recompute_scale_factor=True),
     ValueError, "recompute_scale_factor is not meaningful with an explicit size."),
]


def _call(torch_or_tl, kwargs):
    kwargs = dict(kwargs)
    shape = kwargs.pop("shape")
    if "size" not in kwargs:
        kwargs["scale_factor"] = 2
    if torch_or_tl is tl:
        return F.interpolate(tl.zeros(*shape), **kwargs)
    return torch_or_tl.nn.functional.interpolate(torch_or_tl.zeros(*shape), **kwargs)


@pytest.mark.parametrize("kwargs, error, message", ERRORS)
def test_errors_are_pytorchs(kwargs, error, message):
    with pytest.raises(error) as caught:
        _call(tl, kwargs)
    assert str(caught.value) == message


@pytest.mark.parity
@pytest.mark.parametrize("kwargs, error, message", ERRORS)
def test_pytorch_raises_the_same(kwargs, error, message):
    torch = pytest.importorskip("torch")
    with pytest.raises(error) as caught:
        _call(torch, kwargs)
    assert str(caught.value) == message
