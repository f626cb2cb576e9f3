"""The package ``tensorlib.engine`` (chapter 2): one module per idea, ``Tensor`` assembled from mixins.

Checks the structure the chapter promises (every public name importable from ``tensorlib.engine``,
modules of readable size in chapter order, methods defined in classes rather than patched in), the one
dtype/device resolver ``parse_to``, the activations defined once, and the error messages that name the
likely mistake.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.engine as engine
import tensorlib.nn.functional as F

ENGINE_DIR = Path(engine.__file__).parent

# Every public name tensorlib.engine had as a single module, before it became a package.
PUBLIC_NAMES = """
is_grad_enabled no_grad enable_grad set_grad_enabled Function run_backward float16 float32 float64 double int8
int16 int32 int64 long uint8 bool_ device as_device cuda Tensor tensor from_numpy zeros ones empty full zeros_like
ones_like full_like empty_like arange linspace eye Add Sub Mul Div Neg Pow Sum Mean Var MatMul Exp Log Sqrt Abs Tanh
Sigmoid Relu Clamp Extremum ExtremumAlongDim ElementwiseExtremum Softmax LogSoftmax Reshape Permute Expand Cast Clone
Index Cat Stack Where MaskedFill cat concat stack split chunk where matmul exp log sqrt tanh sigmoid relu clamp softmax
log_softmax reshape transpose permute flatten unsqueeze squeeze masked_fill tril triu mean var argmax argmin numel
is_tensor allclose sum max min abs maximum minimum inf nan Sin Cos Log1p Cumsum Gather Repeat Norm Sort sin cos log1p
square rsqrt cumsum gather norm sort topk bmm outer parse_to TensorBase
""".split()

# The modules in chapter order: each may import only the ones before it.
CHAPTER_ORDER = [
    "grad_mode", "dtypes", "tensor_core", "function", "creation", "capture", "promotion", "conversion", "arithmetic",
    "reductions", "matmul", "selection", "elementwise", "softmax", "shape_ops", "indexing", "joining", "versions",
    "inplace", "freeing", "retain_grad", "interop", "tensor_class",
]


@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_every_public_name_imports_from_tensorlib_engine(name):
    assert hasattr(engine, name), f"tensorlib.engine lost {name!r}"
    assert name in engine.__all__


def test_the_engine_modules_are_all_listed_and_of_readable_size():
    found = sorted(p.stem for p in ENGINE_DIR.glob("*.py") if p.stem != "__init__")
    assert found == sorted(CHAPTER_ORDER)
    for stem in found:
        lines = (ENGINE_DIR / f"{stem}.py").read_text(encoding="utf-8").count("\n")
        assert lines <= 800, f"tensorlib/engine/{stem}.py has {lines} lines: split it by concept"


def test_each_module_imports_only_earlier_modules_of_the_chapter():
    for position, stem in enumerate(CHAPTER_ORDER):
        tree = ast.parse((ENGINE_DIR / f"{stem}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tensorlib.engine"):
                if node.module == "tensorlib.engine":
                    imported = [alias.name for alias in node.names]
                else:
                    imported = [node.module.split(".")[2]]
                for module in imported:
                    if module not in CHAPTER_ORDER:
                        continue
                    inside_type_checking = any(
                        isinstance(parent, ast.If) and "TYPE_CHECKING" in ast.unparse(parent.test) and node in ast.walk(parent)
                        for parent in ast.walk(tree)
                    )
                    assert inside_type_checking or CHAPTER_ORDER.index(module) < position, (
                        f"tensorlib.engine.{stem} imports tensorlib.engine.{module}, which the chapter writes later"
                    )


def test_tensor_methods_are_written_in_classes_not_patched_in():
    for klass in tl.Tensor.__mro__[:-1]:
        for name, value in vars(klass).items():
            function = value.fget if isinstance(value, property) else value
            if inspect.isfunction(function):
                assert function.__qualname__.startswith(klass.__name__ + "."), (
                    f"{klass.__name__}.{name} is {function.__qualname__}: defined outside the class"
                )
    assert tl.Tensor.__module__ == "tensorlib.engine.tensor_class"
    for mixin in tl.Tensor.__mro__[1:-1]:
        module = importlib.import_module(mixin.__module__)
        assert mixin.__module__.startswith("tensorlib.engine."), mixin
        assert getattr(module, mixin.__name__) is mixin


def test_the_first_definitions_hold_no_production_concern():
    """Function.apply and the core engine's steps know nothing of versions, freeing, retain_grad or capture."""
    from tensorlib.engine.function import Engine, Function

    core = [Function.apply, Engine.run, Engine.order, Engine.node_backward, Engine.deliver_to_leaf]
    for method in core:
        code = inspect.getsource(method)
        for word in ("saved", "_in_place", "changes", "release", "retain", "capture", "versions"):
            assert word not in code, f"{method.__qualname__} mentions {word!r}"
    assert set(Function.__slots__) == {"inputs", "needs_input_grad", "saved"}


def test_the_assembled_engine_is_the_core_plus_one_piece_per_section():
    from tensorlib.engine import function
    from tensorlib.engine.capture import CaptureGrads
    from tensorlib.engine.freeing import FreeSavedValues
    from tensorlib.engine.retain_grad import RetainedGrads
    from tensorlib.engine.tensor_class import BackwardPass
    from tensorlib.engine.versions import CheckSavedValues

    assert function._engine is BackwardPass
    assert BackwardPass.__mro__[1:-1] == (CaptureGrads, CheckSavedValues, FreeSavedValues, RetainedGrads, function.Engine)
    assert vars(BackwardPass).keys() <= {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__firstlineno__", "__static_attributes__"}


def test_a_pass_without_capture_or_retained_tensors_uses_the_class_steps():
    """capture= and retain_grad wrap the per-node step for their pass only: other passes pay nothing for them."""
    from tensorlib.engine import function
    from tensorlib.engine.tensor_class import BackwardPass

    passes = []

    class Spy(BackwardPass):
        def run(self, roots, root_grads):
            result = super().run(roots, root_grads)
            passes.append(dict(vars(self)))
            return result

    previous = function._engine
    function._engine = Spy
    try:
        x = tl.ones(3, requires_grad=True)
        (x * x).sum().backward()
        h = x * 2
        h.retain_grad()
        (h * h).sum().backward()
        del h  # its registry entry goes with it
        tl.autograd.grad((x * x).sum(), x)
    finally:
        function._engine = previous
    # the per-node step each pass ran: freeing always (it is one closure call), the others only when used
    steps = [(p["node_backward"].__name__, "deliver_to_leaf" in p) for p in passes]
    assert steps == [
        ("node_backward_freeing", False),
        ("node_backward_retaining", False),
        ("node_backward_freeing", True),  # wraps the capturing step, which replaced deliver_to_leaf
    ]


def test_ops_return_the_assembled_tensor_also_on_subclasses():
    p = tl.nn.Parameter(tl.ones(2, 2))
    for result in (p * 2, p.sum(), p.reshape(4), p[0], tl.zeros(3), p.exp(), p @ p, p.detach()):
        assert type(result) is tl.Tensor
    assert not hasattr(tl.ones(1), "__dict__")  # __slots__ all the way down: no per-tensor dict


def test_activations_are_defined_once():
    for name in ("relu", "sigmoid", "tanh", "softmax", "log_softmax"):
        assert getattr(F, name) is getattr(tl, name) is getattr(engine, name), name
    x = tl.tensor([-1.0, 2.0])
    assert F.relu(x, inplace=False).tolist() == [0.0, 2.0]


def test_parse_to_reads_pytorch_forms():
    cpu = tl.device("cpu")
    assert tl.engine.parse_to() == (cpu, None)
    assert tl.engine.parse_to(tl.float64) == (cpu, np.dtype("float64"))
    assert tl.engine.parse_to("cpu", tl.float16) == (cpu, np.dtype("float16"))
    assert tl.engine.parse_to(tl.zeros(2, dtype=tl.int64)) == (cpu, np.dtype("int64"))
    assert tl.engine.parse_to(np.float32) == (cpu, np.dtype("float32"))
    assert tl.engine.parse_to(dtype="float64", device=cpu)[1] == np.dtype("float64")
    with pytest.raises(ValueError, match="CPU only"):
        tl.engine.parse_to("cuda")
    with pytest.raises(ValueError, match="CPU only"):
        tl.zeros(2, device="cuda:0")
    with pytest.raises(TypeError, match="at most 2 positional"):
        tl.engine.parse_to("cpu", tl.float32, tl.float64)
    with pytest.raises(TypeError, match="bool, integer and floating point"):
        tl.zeros(2, dtype=np.complex64)
    with pytest.raises(TypeError, match="tensorlib dtype"):
        tl.ones(2).to(dtype=object())


def test_backward_outside_the_graph_names_no_grad():
    w = tl.ones(3, requires_grad=True)
    with tl.no_grad():
        loss = (w * 2).sum()
    with pytest.raises(RuntimeError, match="no_grad"):
        loss.backward()


def test_cross_entropy_with_float_class_targets_asks_for_integers():
    logits = tl.zeros(4, 3)
    with pytest.raises(TypeError, match=r"class-index targets must be integers.*\.long\(\)"):
        F.cross_entropy(logits, tl.tensor([0.0, 2.0, 1.0, 2.0]))


def test_cross_entropy_with_swapped_arguments_suggests_the_swap():
    logits, labels = tl.zeros(4, 3), tl.tensor([0, 2, 1, 2])
    with pytest.raises(TypeError, match="swapped"):
        F.cross_entropy(labels, logits)
    with pytest.raises(TypeError, match="swapped"):
        F.nll_loss(labels, logits)
    with pytest.raises(TypeError, match="floating point scores"):
        F.cross_entropy(labels, labels)
    with pytest.raises(TypeError, match="expected a Tensor input, got list"):
        F.cross_entropy([[0.0, 1.0]], labels[:1])
