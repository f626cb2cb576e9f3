"""The package ``tensorlib.engine`` (chapter 2): one module per idea, ``Tensor`` one class.

Checks the structure the chapter promises (every public name importable from ``tensorlib.engine``,
modules of readable size importing without cycles, ``Tensor`` one class whose methods find the op
modules' functions when called, a backward pass that pays only for what it uses), the one
dtype/device resolver ``parse_to``, the activations defined once, and the error messages that name
the likely mistake.
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

# Every public name tensorlib.engine had as a single module, before it became a package, and the
# functions behind the operators.
PUBLIC_NAMES = """
is_grad_enabled no_grad enable_grad set_grad_enabled Function run_backward float16 float32 float64
double int8 int16 int32 int64 long uint8 bool_ device as_device cuda Tensor tensor from_numpy zeros
ones empty full zeros_like ones_like full_like empty_like arange linspace eye Add Sub Mul Div Neg
Pow Sum Mean Var MatMul Exp Log Sqrt Abs Tanh Sigmoid Relu Clamp Extremum ExtremumAlongDim
ElementwiseExtremum Softmax LogSoftmax Reshape Permute Expand Cast Clone Index Cat Stack Where
MaskedFill cat concat stack split chunk where matmul exp log sqrt tanh sigmoid relu clamp softmax
log_softmax reshape transpose permute flatten unsqueeze squeeze masked_fill tril triu mean var
argmax argmin numel is_tensor allclose sum max min abs maximum minimum inf nan Sin Cos Log1p Cumsum
Gather Repeat Norm Sort sin cos log1p square rsqrt cumsum gather norm sort topk bmm outer parse_to
add sub mul div neg pow eq ne lt le gt ge floor_divide remainder bitwise_not bitwise_and bitwise_or
bitwise_xor std amax amin expand repeat
""".split()

# The modules in the order the package imports them: each may import only the ones before it.
PACKAGE_ORDER = [
    "parallel",
    "grad_mode",
    "anomaly",
    "dtypes",
    "tensor_type",
    "versions",
    "freeing",
    "saved_hooks",
    "function",
    "out_arg",
    "creation",
    "promotion",
    "conversion",
    "division",
    "arithmetic",
    "histograms",
    "reductions",
    "more_reductions",
    "cumulative",
    "matmul_ops",
    "selection",
    "elementwise",
    "softmax_ops",
    "shape_ops",
    "indexing",
    "joining",
    "statistics",
    "pairwise_ops",
    "special_ops",
    "special_gamma",
    "special_bessel",
    "special_polynomials",
    "linalg_ops",
    "linalg_norms",
    "linalg_decomps",
    "more_ops",
    "scatter_ops",
    "view_copies",
    "inplace",
    "inplace_views",
    "retain_grad",
    "hooks",
    "interop",
    "higher_order",
]


@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_every_public_name_imports_from_tensorlib_engine(name):
    assert hasattr(engine, name), f"tensorlib.engine lost {name!r}"
    assert name in engine.__all__


def test_the_engine_modules_are_all_listed_and_of_readable_size():
    found = sorted(p.stem for p in ENGINE_DIR.glob("*.py") if p.stem != "__init__")
    assert found == sorted(PACKAGE_ORDER)
    for stem in found:
        text = (ENGINE_DIR / f"{stem}.py").read_text(encoding="utf-8")
        # a class of one-line dispatches may be long (so is torch/_tensor.py)
        if stem != "tensor_type":
            lines = text.count("\n")
            assert lines <= 800, (
                f"tensorlib/engine/{stem}.py has {lines} lines: split it by concept"
            )
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                assert length <= 60, f"tensorlib/engine/{stem}.py: {node.name} has {length} lines"


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's lines without its docstring."""
    lines = node.end_lineno - node.lineno + 1
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        if isinstance(first.value.value, str):
            lines -= first.end_lineno - first.lineno + 1
    return lines


def test_no_function_in_the_package_is_longer_than_a_reader_can_hold():
    """The guide's size rule, package-wide: no function over 60 lines of code (its docstring
    aside; the engine's limit above counts the docstring too)."""
    package = ENGINE_DIR.parent
    too_long = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if _code_lines(node) > 60:
                    where = path.relative_to(package.parent)
                    too_long.append(f"{where}:{node.lineno} {node.name} ({_code_lines(node)})")
    assert not too_long, "functions over 60 lines of code: " + ", ".join(too_long)


def test_each_module_imports_only_modules_before_it():
    """The package imports without cycles: each module imports only modules listed before it.

    The one exception is the statement that closes ``tensor_type``: the op modules, imported below
    ``Tensor`` because each of them imports it (``Tensor``'s methods look them up when called).
    """
    for position, stem in enumerate(PACKAGE_ORDER):
        tree = ast.parse((ENGINE_DIR / f"{stem}.py").read_text(encoding="utf-8"))
        # an import inside a function runs when it is called, after the package has loaded (as
        # torch.norm's reductions.norm reads linalg_norms): it cannot make a cycle
        deferred = {
            id(inner) for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in deferred or not (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("tensorlib.engine")
            ):
                continue
            if node.module == "tensorlib.engine":
                imported = [alias.name for alias in node.names]
            else:
                imported = [node.module.split(".")[2]]
            inside_type_checking = any(
                isinstance(parent, ast.If)
                and "TYPE_CHECKING" in ast.unparse(parent.test)
                and node in ast.walk(parent)
                for parent in ast.walk(tree)
            )
            closing = stem == "tensor_type" and node is tree.body[-1]
            for module in imported:
                assert module in PACKAGE_ORDER, module
                assert inside_type_checking or closing or PACKAGE_ORDER.index(module) < position, (
                    f"tensorlib.engine.{stem} imports tensorlib.engine.{module}, which comes later"
                )


def test_the_op_modules_are_imported_at_the_bottom_of_tensor_type():
    tree = ast.parse((ENGINE_DIR / "tensor_type.py").read_text(encoding="utf-8"))
    last = tree.body[-1]
    assert isinstance(last, ast.ImportFrom) and last.module == "tensorlib.engine"
    names = {alias.name for alias in last.names}
    assert names == set(PACKAGE_ORDER[PACKAGE_ORDER.index("tensor_type") + 1 :]) - {
        "versions",
        "freeing",
        "saved_hooks",  # Tensor's methods never pack saved tensors (engine.function does)
        "promotion",
        "linalg_norms",  # no method of Tensor's calls it (torch.Tensor has no vector_norm)
        "special_bessel",  # nor these: torch.Tensor has no Bessel or polynomial methods
        "special_polynomials",
        "out_arg",  # the out= keyword: methods do not take it, as in PyTorch
        "inplace_views",  # called by inplace's _record, not by a method
    }
    for name in names:  # the methods find every module they call
        assert getattr(
            importlib.import_module("tensorlib.engine.tensor_type"), name
        ) is importlib.import_module(f"tensorlib.engine.{name}")


def test_tensor_is_one_class_defined_in_one_place():
    assert tl.Tensor.__mro__ == (tl.Tensor, object)
    assert tl.Tensor.__module__ == "tensorlib.engine.tensor_type"
    for name, value in vars(tl.Tensor).items():
        function = value.fget if isinstance(value, property) else value
        if inspect.isfunction(function):
            assert function.__qualname__ == f"Tensor.{function.__name__}", (
                f"Tensor.{name} is {function.__qualname__}"
            )
    assert not hasattr(engine, "TensorBase")
    assert len([name for name in dir(tl.Tensor) if not name.startswith("_")]) > 100


def test_a_tensor_made_before_a_function_is_redefined_still_works():
    """Methods look their function up when called: redefining an op module's function reaches every
    tensor."""
    from tensorlib.engine import arithmetic

    x = tl.tensor([1.0, 2.0], requires_grad=True)
    original = arithmetic.mul
    calls = []

    def spy(input, other):
        calls.append(1)
        return original(input, other)

    arithmetic.mul = spy
    try:
        (x * x).sum().backward()
    finally:
        arithmetic.mul = original
    assert calls == [1] and x.grad.tolist() == [2.0, 4.0]


def _functions_called(run):
    """The names of the Python functions ``run()`` calls (sys.setprofile 'call' events)."""
    import sys

    names = []

    def profile(frame, event, arg):
        if event == "call":
            names.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return names


def test_a_pass_pays_only_for_the_features_it_uses():
    """Without capture= or a retained tensor, the pass calls neither step; with them, it does."""
    x = tl.ones(3, requires_grad=True)
    y = (x * x).sum()
    plain = _functions_called(lambda: y.backward())
    assert "_capture" not in plain and "_deliver_retained" not in plain and "deliver" not in plain
    assert "release" in plain  # freeing runs unless retain_graph
    y = (x * x).sum()
    kept = _functions_called(lambda: y.backward(retain_graph=True))
    assert "release" not in kept
    h = x * 2
    h.retain_grad()
    z = (h * h).sum()
    retaining = _functions_called(z.backward)
    assert "_deliver_retained" in retaining
    del h, z  # its registry entry goes with it
    capturing = _functions_called(lambda: tl.autograd.grad((x * x).sum(), x))
    assert "_capture" in capturing and "_deliver_retained" not in capturing


def test_autograd_grad_leaves_retained_tensors_alone():
    """The order of the pass's steps is fixed in one function: capture never writes into .grad."""
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    h.retain_grad()
    (gh,) = tl.autograd.grad((h * h).sum(), h, retain_graph=True)
    assert h.grad is None and x.grad is None
    assert gh.tolist() == [6.0, 12.0]
    (h * h).sum().backward()
    assert h.grad.tolist() == [6.0, 12.0] and x.grad.tolist() == [18.0, 36.0]


def test_a_refused_pass_touches_no_grad_even_of_a_leaf_root():
    """The version check runs over the whole graph before any gradient is delivered, leaf roots
    included."""
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # its backward reads its output
    with tl.no_grad():
        y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tl.autograd.backward([x.sum(), y.sum()])
    assert x.grad is None


def test_ops_return_plain_tensors_also_on_subclasses():
    p = tl.nn.Parameter(tl.ones(2, 2))
    results = (
        p * 2,
        2 - p,
        p / 3,
        p**2,
        -p,
        p.sum(),
        p.mean(0),
        p.max(),
        p.max(1).values,
        p.reshape(4),
        p[0],
        p.T,
        p.clone(),
        tl.zeros(3),
        p.exp(),
        p.tanh(),
        p.softmax(-1),
        p @ p,
        p.detach(),
        p > 0,
        p.masked_fill(p > 0, 1.0),
        p.to(tl.float64),
        tl.cat([p, p]),
        p.split(1)[0],
        p.new_zeros(2),
        np.ones((2, 2)) * p,
        p.expand(3, 2, 2),
    )
    for result in results:
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
