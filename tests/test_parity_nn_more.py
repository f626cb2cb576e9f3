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
