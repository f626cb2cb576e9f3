"""tensorlib.amp's decorators of custom autograd Functions and its availability query (chapter 8,
section 16): custom_fwd, custom_bwd and is_autocast_available, against PyTorch 2.13 on a CPU, and
the files of torch.amp (autocast_mode, grad_scaler) as programs import them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.amp as amp

REPO = Path(__file__).resolve().parent.parent


def _scale_function(lib, device_type, cast_inputs):
    """A custom Function y = x**2 * 3 with its forward and backward decorated, in ``lib``
    (tensorlib or torch); it records the ctx attributes the decorators set."""
    seen = {}

    class Square(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type=device_type, cast_inputs=cast_inputs)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            seen["forward"] = (ctx._fwd_used_autocast, str(ctx._dtype).split(".")[-1], x.dtype)
            return x * x * 3.0

        @staticmethod
        @lib.amp.custom_bwd(device_type=device_type)
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            seen["backward"] = lib.is_autocast_enabled()
            return grad * 6.0 * x

    return Square, seen


@pytest.mark.parity
@pytest.mark.parametrize("device_type", ["cpu", "cuda"])
@pytest.mark.parametrize("cast", [None, "float16", "bfloat16"])
def test_custom_fwd_and_bwd_outside_autocast_match_pytorch(device_type, cast):
    torch = pytest.importorskip("torch")
    values = [0.5, -1.25, 2.0]
    results = []
    for lib in (tl, torch):
        function, seen = _scale_function(lib, device_type, cast and getattr(lib, cast))
        x = lib.tensor(values, requires_grad=True)
        y = function.apply(x)
        y.sum().backward()
        results.append((y.detach().numpy().tolist(), x.grad.numpy().tolist(),
                        seen["forward"][:2], str(seen["forward"][2]).split(".")[-1],
                        seen["backward"]))
    assert results[0] == results[1]
    assert results[0][2] == (False, "bfloat16" if device_type == "cpu" else "float16")


def test_a_decorated_function_passes_gradcheck_in_float64():
    function, _ = _scale_function(tl, "cpu", tl.float16)
    x = tl.tensor(np.random.default_rng(0).normal(size=5), dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(function.apply, (x,))


@pytest.mark.parity
def test_decorator_forms_and_errors_match_pytorch():
    torch = pytest.importorskip("torch")

    def forward(ctx, x):
        """doc"""
        return x

    for lib in (amp, torch.amp):
        direct = lib.custom_fwd(forward, device_type="cpu")
        called = lib.custom_fwd(device_type="cpu")(forward)
        assert direct.__name__ == called.__name__ == "forward" and direct.__doc__ == "doc"
        assert lib.custom_bwd(forward, device_type="cpu").__wrapped__ is forward
        for decorator in (lib.custom_fwd, lib.custom_bwd):
            with pytest.raises(ValueError, match="Expected `device_type` of type `str`, got: "
                                                 "`<class 'int'>`"):
                decorator(forward, device_type=0)
            with pytest.raises(TypeError, match="missing 1 required keyword-only argument: "
                                                "'device_type'"):
                decorator(forward)


@pytest.mark.parity
def test_custom_bwd_without_custom_fwd_fails_as_in_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        class Plain(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2.0

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad):
                return grad * 2.0

        y = Plain.apply(lib.ones(2, requires_grad=True)).sum()
        with pytest.raises(AttributeError, match="_fwd_used_autocast"):
            y.backward()


@pytest.mark.parity
@pytest.mark.parametrize("device_type", ["cpu", "cuda", "cuda:0", "mps", "xpu", "meta"])
def test_is_autocast_available_is_false_where_pytorch_knows_the_device(device_type):
    torch = pytest.importorskip("torch")
    torch.amp.is_autocast_available(device_type)  # a device type PyTorch accepts
    assert amp.is_autocast_available(device_type) is False  # tensorlib: no mixed precision


@pytest.mark.parity
@pytest.mark.parametrize("device_type", ["foo", "CPU", 3])
def test_is_autocast_available_refuses_what_pytorch_refuses(device_type):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        torch.amp.is_autocast_available(device_type)
    with pytest.raises(type(theirs.value)) as ours:
        amp.is_autocast_available(device_type)
    # PyTorch's TypeError names its C function, _is_autocast_available; ours the public one
    assert str(ours.value) == str(theirs.value).removeprefix("_")


@pytest.mark.parity
def test_amp_names_match_pytorchs():
    torch = pytest.importorskip("torch")
    for name in torch.amp.__all__:
        assert hasattr(amp, name), name


def test_torch_amp_files_resolve_through_run_as_torch(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import torch\n"
        "from torch.amp.autocast_mode import autocast, custom_bwd, custom_fwd\n"
        "from torch.amp.autocast_mode import is_autocast_available\n"
        "from torch.amp.grad_scaler import GradScaler\n\n\n"
        "class Double(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    @custom_fwd(device_type='cpu', cast_inputs=torch.float16)\n"
        "    def forward(ctx, x):\n"
        "        return x * 2\n\n"
        "    @staticmethod\n"
        "    @custom_bwd(device_type='cpu')\n"
        "    def backward(ctx, grad):\n"
        "        return grad * 2\n\n\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "with autocast('cpu', enabled=False):\n"
        "    Double.apply(x).sum().backward()\n"
        "print(x.grad.tolist(), GradScaler is torch.amp.GradScaler, autocast is torch.autocast,\n"
        "      is_autocast_available('cpu'))\n",
        encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "tensorlib.run_as_torch", str(script)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[2.0, 2.0] True True False"
