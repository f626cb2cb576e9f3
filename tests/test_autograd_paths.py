"""Chapter 2: ``tensorlib.autograd`` is a package with PyTorch's submodule paths, so the imports
real programs write (``from torch.autograd.function import once_differentiable``, ``from
torch.autograd.functional import jacobian``) work with ``tensorlib`` in place of ``torch``."""

from __future__ import annotations

import importlib

import pytest

import tensorlib as tl

# (submodule, names a program imports from it)
PATHS = [
    ("autograd.function", ["Function", "once_differentiable"]),
    ("autograd.functional", ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]),
    ("autograd.gradcheck", ["gradcheck", "gradgradcheck", "GradcheckError"]),
    ("autograd.variable", ["Variable"]),
    ("autograd.graph", ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
                        "register_multi_grad_hook", "Node", "GradientEdge", "get_gradient_edge",
                        "increment_version"]),
    ("autograd", ["grad", "backward", "Function", "gradcheck",
                  "gradgradcheck", "Variable", "detect_anomaly", "set_detect_anomaly",
                  "no_grad", "enable_grad", "set_grad_enabled", "functional", "anomaly_mode",
                  "graph"]),
]


@pytest.mark.parametrize(("path", "names"), PATHS, ids=[p for p, _ in PATHS])
def test_the_submodule_paths_hold_the_names(path, names):
    module = importlib.import_module(f"tensorlib.{path}")
    for name in names:
        assert hasattr(module, name), f"tensorlib.{path} has no {name}"


def test_the_names_are_the_same_objects_on_every_path():
    from tensorlib.autograd.function import Function, once_differentiable
    from tensorlib.autograd.functional import jacobian
    from tensorlib.autograd.gradcheck import gradcheck, gradgradcheck
    from tensorlib.autograd.variable import Variable

    assert Function is tl.autograd.Function is tl.Function
    assert once_differentiable is tl.autograd.once_differentiable
    assert jacobian is tl.autograd.functional.jacobian
    assert gradcheck is tl.autograd.gradcheck and gradgradcheck is tl.autograd.gradgradcheck
    assert Variable is tl.autograd.Variable
    assert tl.autograd.anomaly_mode.detect_anomaly is tl.autograd.detect_anomaly
    assert tl.autograd.no_grad is tl.no_grad


def test_a_custom_op_written_against_pytorchs_paths_runs():
    from tensorlib.autograd.function import Function, once_differentiable
    from tensorlib.autograd.functional import jacobian

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x * x

    x = tl.tensor([1.0, 2.0], dtype=tl.float64)
    jac = jacobian(lambda t: Cube.apply(t), x)
    assert jac.tolist() == [[3.0, 0.0], [0.0, 12.0]]


@pytest.mark.parity
@pytest.mark.parametrize(("path", "names"), PATHS, ids=[p for p, _ in PATHS])
def test_pytorch_has_the_same_paths(path, names):
    pytest.importorskip("torch")
    module = importlib.import_module(f"torch.{path}")
    for name in names:
        assert hasattr(module, name), f"torch.{path} has no {name}"
