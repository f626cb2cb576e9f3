"""The ``out=`` keyword (chapter 2, ``tensorlib.engine.out_arg``): results written into a tensor
the caller passes, as PyTorch's functions do.

Parity with PyTorch 2.13 for every function that takes ``out`` (PyTorch's OpInfo sample inputs,
drawn in a subprocess, or simple inputs), the returned object, the version counter, the resize
warning, the dtype rule, the autograd refusal and tuple outs; and a check that every function
PyTorch gives ``out`` and tensorlib has takes it too, so the list cannot drift.
"""

from __future__ import annotations

import inspect
import pickle
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.linalg
import tensorlib.special

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.parity

# torch functions that take out= and that tensorlib has without it, with the reason
NOT_COVERED: dict[str, str] = {}
# ATen has an out overload, torch's Python function refuses out=
ATEN_ONLY = {"linalg.matrix_exp"}
NAMESPACES = (("", tl), ("linalg.", tl.linalg), ("special.", tl.special))


def _torch_function(name: str) -> Any:
    namespace, _, base = name.rpartition(".")
    return getattr(getattr(torch, namespace) if namespace else torch, base)


def _tl_function(name: str) -> Any:
    namespace, _, base = name.rpartition(".")
    return getattr(getattr(tl, namespace) if namespace else tl, base)


def _torch_takes_out(name: str) -> bool:
    """Whether PyTorch's Python function ``name`` takes ``out=``: its type stub for the top-level
    functions, its documentation for ``torch.linalg`` and ``torch.special``."""
    namespace, _, base = name.rpartition(".")
    if not namespace:
        if base in _stub_functions_with_out():
            return True
        try:
            return "out" in inspect.signature(getattr(torch, base)).parameters
        except (AttributeError, TypeError, ValueError):
            return False
    function = getattr(getattr(torch, namespace), base, None)
    if function is None:
        return False
    if re.search(r"\bout \(", function.__doc__ or ""):
        return True
    if name in ATEN_ONLY:
        return False
    try:  # the ATen op behind it, when the documentation does not list out
        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{namespace}_{base}")
    except RuntimeError:
        return False
    return any(  # a keyword-only argument written to: out, or (values, indices), ...
        argument.kwarg_only and argument.alias_info is not None and argument.alias_info.is_write
        for schema in schemas
        for argument in schema.arguments
    )


_STUB: set[str] = set()


def _stub_functions_with_out() -> set[str]:
    if not _STUB:
        path = Path(torch.__file__).parent / "_C" / "_VariableFunctions.pyi"
        text = path.read_text(encoding="utf-8")
        _STUB.update(
            match.group(1)
            for match in re.finditer(r"^def (\w+)\((.*?)\) ->", text, re.M | re.S)
            if re.search(r"\bout: ", match.group(2))
        )
    return _STUB


def _public_functions() -> list[str]:
    names = []
    for prefix, module in NAMESPACES:
        for name in sorted(set(getattr(module, "__all__", dir(module)))):
            value = getattr(module, name, None)
            if callable(value) and not isinstance(value, type) and not name.startswith("_"):
                names.append(prefix + name)
    return names


def _takes_out(function: Any) -> bool:
    try:
        return "out" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


OUT_FUNCTIONS = [name for name in _public_functions() if _takes_out(_tl_function(name))]


def test_every_torch_function_with_out_takes_it_here_too():
    lacking = [
        name
        for name in _public_functions()
        if name not in NOT_COVERED
        and not _takes_out(_tl_function(name))
        and _torch_takes_out(name)
    ]
    assert not lacking, f"PyTorch takes out= here, tensorlib does not: {lacking}"
    assert len(OUT_FUNCTIONS) > 290


# names of one tensorlib function that takes out= under its other name in PyTorch
# (torch.det, torch.special.log_softmax and torch.special.softmax have no out=): the name of the
# function in PyTorch that does
SHARED = {"det": "linalg.det", "special.log_softmax": "log_softmax", "special.softmax": "softmax"}
# torch's other names of an op: the samples of the OpInfo of that name are used
SAMPLES_OF = {
    "clip": "clamp", "divide": "div", "linalg.matmul": "matmul", "concatenate": "cat",
    "special.multigammaln": "mvlgamma",
}


def test_only_torch_functions_take_out():
    extra = [name for name in OUT_FUNCTIONS if name not in SHARED and not _torch_takes_out(name)]
    assert not extra, f"tensorlib takes out= where PyTorch does not: {extra}"


@pytest.mark.parametrize(
    "name", ["add", "exp", "sum", "var", "linalg.inv", "special.erfcx", "zeros"]
)
def test_signature_and_docstring_show_out(name):
    function = _tl_function(name)
    parameter = inspect.signature(function).parameters["out"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is None
    if hasattr(function, "__wrapped__"):  # decorated: the docstring gets a paragraph on out
        assert "``out``" in function.__doc__


# the functions behind the operators and the most used methods take out in their own signature
DIRECT = """add sub mul div pow neg matmul eq ne lt le gt ge floor_divide remainder bitwise_and
bitwise_or bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift abs sum mean std exp
log sqrt rsqrt tanh sigmoid max min amax amin argmax argmin cumsum where cat stack square maximum
minimum bmm mm addmm baddbmm log1p expm1 sin cos gather index_select logsumexp reciprocal trunc
floor ceil round sign erf var clamp softmax log_softmax""".split()


@pytest.mark.parametrize("name", DIRECT)
def test_operators_and_common_methods_pay_no_wrapper(name):
    function = _tl_function(name)
    assert not hasattr(function, "__wrapped__") and "out" in function.__code__.co_varnames


def test_methods_and_operators_take_no_out():
    x = tl.ones(2)
    with pytest.raises(TypeError):
        x.add(x, out=tl.empty(0))  # as torch.Tensor.add
    with pytest.raises(TypeError):
        torch.ones(2).add(torch.ones(2), out=torch.empty(0))


# --- parity on PyTorch's OpInfo samples --------------------------------------------------------

_SAMPLER = textwrap.dedent("""
    import pickle, sys, warnings
    warnings.filterwarnings("ignore")
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    names = set(sys.argv[2].split(","))

    def encode(value):
        if isinstance(value, torch.Tensor):
            if value.is_complex() or value.layout != torch.strided:
                raise ValueError("complex or sparse")
            return ("tensor", value.detach().numpy().copy())
        if isinstance(value, torch.dtype):
            return ("dtype", str(value).split(".")[-1])
        if isinstance(value, torch.Size):
            return tuple(value)
        if isinstance(value, (list, tuple)):
            return type(value)(encode(v) for v in value) if type(value) in (list, tuple) else (
                tuple(encode(v) for v in value))
        if isinstance(value, dict):
            return {k: encode(v) for k, v in value.items()}
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        raise ValueError(type(value).__name__)

    samples = {}
    for op in op_db:
        if op.name not in names:
            continue
        kept = 0
        for sample in op.sample_inputs("cpu", torch.float64):
            try:
                encoded = (encode(sample.input), encode(list(sample.args)), encode(sample.kwargs))
            except ValueError:
                continue
            samples.setdefault(op.name, []).append(encoded)
            kept += 1
            if kept == 6:
                break
    with open(sys.argv[1], "wb") as file:
        pickle.dump(samples, file)
""")


@pytest.fixture(scope="module")
def opinfo_samples(tmp_path_factory):
    """Up to 6 float64 samples of each OpInfo op, drawn in a subprocess: importing PyTorch's
    test helpers changes process-wide settings other tests should not inherit."""
    pytest.importorskip("expecttest")
    path = tmp_path_factory.mktemp("out") / "samples.pkl"
    result = subprocess.run(
        [sys.executable, "-c", _SAMPLER, str(path), ",".join(OUT_FUNCTIONS)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    with open(path, "rb") as file:
        return pickle.load(file)


def _decode(value: Any, library: str) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "tensor":
        array = value[1]
        return torch.from_numpy(array.copy()) if library == "torch" else tl.tensor(array.copy())
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "dtype":
        return getattr(torch, value[1]) if library == "torch" else getattr(tl, value[1])
    if isinstance(value, (list, tuple)):
        return type(value)(_decode(v, library) for v in value)
    if isinstance(value, dict):
        return {k: _decode(v, library) for k, v in value.items()}
    return value


def _empty_like_results(result: Any, library: str, shaped: bool = False) -> Any:
    """Empty tensors of the results' dtypes (of their shapes if ``shaped``): what a caller passes
    as ``out``. A list result (``split_copy``) gets a list."""
    if isinstance(result, (tuple, list)):
        return type(result)(_empty_like_results(r, library, shaped) for r in result)
    shape = tuple(result.shape) if shaped else (0,)
    if library == "torch":
        return torch.zeros(shape, dtype=result.dtype)
    return tl.zeros(shape, dtype=_tl_dtype(result.dtype))


def _tl_dtype(dtype: Any) -> Any:
    return getattr(tl, str(dtype).split(".")[-1])


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _flat(item)]
    return [value]


def _same(expected: Any, got: Any) -> bool:
    want = expected.detach().numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    have = got.numpy() if isinstance(got, tl.Tensor) else np.asarray(got)
    if want.shape != have.shape:
        return False
    if want.dtype.kind == "f" or have.dtype.kind == "f":
        return bool(np.allclose(have, want, rtol=1e-5, atol=1e-5, equal_nan=True))
    return bool(np.array_equal(have, want))


# functions whose values are not compared on OpInfo samples, with the reason
UNCOMPARED = {
    "empty": "uninitialised in PyTorch",
    **dict.fromkeys(
        ["rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial"],
        "random: another generator than PyTorch's",
    ),
}

def _t(values: Any, dtype: Any = np.float64) -> tuple[str, np.ndarray]:
    """A tensor in the samples' encoding."""
    return ("tensor", np.array(values, dtype=dtype))


_INTS = _t([[12, -7, 5], [3, 0, 9]], np.int64)
_SHIFTS = _t([[1, 2, 0], [3, 1, 2]], np.int64)
_SQUARE = _t([[2.0, 0.5, 0.1], [0.3, 1.5, 0.2], [0.1, 0.4, 3.0]])
_ROWS = _t([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]])
# simple inputs for the functions OpInfo has no (usable) samples of: args, kwargs
SIMPLE: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "zeros": ((2, 3), {}), "ones": ((2, 3), {}), "full": (((2, 3), 1.5), {}),
    "eye": ((3,), {}), "arange": ((5,), {}), "linspace": ((0.0, 1.0, 5), {}),
    "logspace": ((0.0, 1.0, 5), {}), "range": ((0, 4), {}), "empty": ((2, 3), {}),
    **{name: ((_INTS, _SHIFTS), {}) for name in (
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
        "gcd", "lcm",
    )},
    "bitwise_not": ((_INTS,), {}),
    "rand": ((2, 3), {}), "randn": ((2, 3), {}), "randint": ((5, (2, 3)), {}),
    "randperm": ((6,), {}), "normal": ((_ROWS, 1.0), {}),
    "bernoulli": ((_t([[0.5, 0.1, 0.9]]),), {}), "multinomial": ((_t([1.0, 2.0, 3.0]), 2), {}),
    "chain_matmul": ((_SQUARE, _SQUARE, _SQUARE), {}),
    "frobenius_norm": ((_ROWS, (0, 1)), {}),
    "nuclear_norm": ((_SQUARE,), {}),
    "inverse": ((_SQUARE,), {}),
    "hardshrink": ((_ROWS, 0.6), {}),
    "threshold": ((_ROWS, 0.3, 20.0), {}),
    "select_copy": ((_ROWS, 1, 0), {}),
    "slice_copy": ((_ROWS, 1, 0, 2), {}),
    "split_copy": ((_ROWS, 2, 1), {}),
    "detach_copy": ((_ROWS,), {}),
    "special.gammainc": ((_t([1.0, 2.5]), _t([0.5, 3.0])), {}),
    # OpInfo calls these through lambdas with another argument order
    "polygamma": ((1, _SQUARE), {}),
    "special.polygamma": ((1, _SQUARE), {}),
    "concatenate": (([_ROWS, _ROWS], 1), {}),  # cat's samples say dim=, concatenate axis=
    "where": ((_t([[True, False, True], [False, False, True]], np.bool_), _ROWS, _ROWS), {}),
    "special.gammaincc": ((_t([1.0, 2.5]), _t([0.5, 3.0])), {}),
}


def _both_without_out(name: str, args: Any, kwargs: Any) -> tuple[Any, ...]:
    """A sample decoded for each library and ``name`` called without out in each (warnings
    ignored): torch's args, kwargs and result, then tensorlib's; raises what either raises."""
    t_args, t_kwargs = _decode(args, "torch"), _decode(kwargs, "torch")
    l_args, l_kwargs = _decode(args, "tl"), _decode(kwargs, "tl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _torch_function(name)(*t_args, **t_kwargs)
        plain = _tl_function(name)(*l_args, **l_kwargs)
    return t_args, t_kwargs, expected, l_args, l_kwargs, plain


def _compare_with_out(name: str, args: Any, kwargs: Any) -> str:
    """Call both libraries with and without out=; 'skip' when tensorlib or PyTorch rejects the
    sample or they disagree without out (that is the sweep's business, not out='s)."""
    try:
        t_args, t_kwargs, expected, l_args, l_kwargs, plain = _both_without_out(name, args, kwargs)
    except Exception:
        return "skip"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not all(isinstance(e, torch.Tensor) for e in _flat(expected)):
            return "skip"
        if len(_flat(expected)) != len(_flat(plain)) or name not in UNCOMPARED and not all(
            _same(e, g) for e, g in zip(_flat(expected), _flat(plain), strict=False)
        ):
            return "skip"
        torch_name = SHARED.get(name, name)
        for shaped in (False, True):  # split_copy's out must have its shapes already
            torch_out = _empty_like_results(expected, "torch", shaped)
            tl_out = _empty_like_results(expected, "tl", shaped)
            try:
                _torch_function(torch_name)(*t_args, **t_kwargs, out=torch_out)
                break
            except Exception:
                if shaped:
                    return "skip"  # PyTorch refuses out= for this sample (sum without dim)
        returned = _tl_function(name)(*l_args, **l_kwargs, out=tl_out)
    pairs = zip(_flat(returned), _flat(tl_out), strict=True)
    assert all(r is o for r, o in pairs), f"{name}: returns other tensors than out"
    for want, have in zip(_flat(torch_out), _flat(tl_out), strict=False):
        if name not in UNCOMPARED:
            assert _same(want, have), f"{name}: out holds other values than PyTorch's"
        assert tuple(want.shape) == have.shape and str(want.dtype).endswith(str(have.dtype)), name
    return "compared"


def _samples_of(name: str, opinfo_samples: dict[str, Any]) -> list[Any]:
    """The OpInfo samples for ``name``: its own, else those of an op of the same function (an
    alias such as absolute or arccos is tried on its op's samples)."""
    function = _tl_function(name)
    sources = [name, SAMPLES_OF.get(name, name)] + [
        other for other in OUT_FUNCTIONS if _tl_function(other) is function
    ]
    return next((opinfo_samples[n] for n in sources if opinfo_samples.get(n)), [])


def _first_cases(name: str, opinfo_samples: dict[str, Any]) -> list[Any]:
    """``(args, kwargs)`` of the first three samples of ``name`` and its SIMPLE call, if any."""
    samples = _samples_of(name, opinfo_samples)[:3]
    cases = [((input, *args), kwargs) for input, args, kwargs in samples]
    return cases + ([SIMPLE[name]] if name in SIMPLE else [])


@pytest.mark.slow
@pytest.mark.parametrize("name", OUT_FUNCTIONS)
def test_out_matches_pytorch(name, opinfo_samples):
    samples = _samples_of(name, opinfo_samples)
    outcomes = [_compare_with_out(name, (input, *args), kwargs) for input, args, kwargs in samples]
    if name in SIMPLE:
        outcomes.append(_compare_with_out(name, *SIMPLE[name]))
    assert "compared" in outcomes, f"{name}: no sample compared ({len(outcomes)} tried)"


# --- what out= does and refuses, against PyTorch ----------------------------------------------

def _pair(values: Any, dtype: str = "float32") -> tuple[Any, Any]:
    array = np.array(values, dtype=dtype)
    return torch.from_numpy(array.copy()), tl.tensor(array.copy())


def test_the_result_goes_into_out_its_views_and_version():
    (tx, x), (ty, y) = _pair([[1.0, 2.0], [3.0, 4.0]]), _pair([[0.5, 0.5], [1.0, 1.0]])
    (t_out, out) = _pair(np.zeros((2, 2)))
    t_row, row = t_out[1], out[1]
    assert tl.add(x, y, out=out) is out and torch.add(tx, ty, out=t_out) is t_out
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())
    np.testing.assert_array_equal(row.numpy(), t_row.numpy())  # the view sees the write
    assert out._version == t_out._version == 1


def test_out_may_be_an_input():
    (tx, x), (ty, y) = _pair([1.0, 2.0]), _pair([10.0, 20.0])
    assert tl.mul(x, y, out=x) is x and torch.mul(tx, ty, out=tx) is tx
    np.testing.assert_array_equal(x.numpy(), tx.numpy())


def test_an_empty_out_is_resized_silently():
    (tx, x) = _pair([[1.0, 2.0, 3.0]])
    for library, value in ((torch, tx), (tl, x)):
        out = library.empty(0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            library.exp(value, out=out)
        assert tuple(out.shape) == (1, 3)


RESIZED = (
    r"An output with one or more elements was resized since it had shape \[5\], which does not "
    r"match the required output shape \[1, 3\]\. This behavior is deprecated"
)


@pytest.mark.parametrize("library", ["torch", "tl"])
def test_a_non_empty_out_is_resized_with_pytorchs_warning(library):
    module = torch if library == "torch" else tl
    x = module.ones(1, 3)
    out = module.zeros(5)
    with pytest.warns(UserWarning, match=RESIZED):
        module.add(x, x, out=out)
    with pytest.warns(UserWarning, match=RESIZED):
        module.sigmoid(x, out=module.zeros(5))  # a decorated function too
    assert tuple(out.shape) == (1, 3) and out.tolist() == [[2.0, 2.0, 2.0]]


def _resize_warnings(call: Any, *args: Any, **kwargs: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(*args, **kwargs)
    # PyTorch ends some messages with where in its C++ sources they were raised
    return [str(w.message).split(" (Triggered internally")[0] for w in caught
            if "resized" in str(w.message)]


@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(4, out=lib.empty(2, 2)),
    lambda lib: lib.randn(3, out=lib.empty(2)),
    lambda lib: lib.linspace(0, 1, 3, out=lib.empty(2)),
    lambda lib: lib.multinomial(lib.ones(3), 3, out=lib.empty(2, dtype=lib.int64)),
    lambda lib: lib.arange(0, 1, 0.25, out=lib.empty(2, 2)),  # as many elements: out's shape
    lambda lib: lib.arange(0, 1, 0.25, out=lib.empty(5)),  # arange's own warning
    lambda lib: lib.arange(0, 1, 0.25, out=lib.empty(0)),
    lambda lib: lib.add(lib.ones(4), 1, out=lib.empty(2, 2)),
], ids=["zeros", "randn", "linspace", "multinomial", "arange-same-size", "arange", "arange-empty",
        "add"])
def test_creation_functions_resize_out_quietly_and_arange_its_own_way(call):
    """PyTorch's creation functions (and a few kernels) resize a wrong-shaped out without the
    warning; arange keeps an out of as many elements and warns in its own words."""
    expected, got = _resize_warnings(lambda: call(torch)), _resize_warnings(lambda: call(tl))
    assert got == expected
    assert tuple(call(tl).shape) == tuple(call(torch).shape)


@pytest.mark.slow
@pytest.mark.parametrize("name", OUT_FUNCTIONS)
def test_resize_warning_matches_pytorch(name, opinfo_samples):
    """Every function given a wrong-shaped, non-empty out warns exactly when PyTorch does."""
    function = _tl_function(name)
    cases = _first_cases(name, opinfo_samples)
    for args, kwargs in cases:
        t_args, t_kwargs = _decode(args, "torch"), _decode(kwargs, "torch")
        l_args, l_kwargs = _decode(args, "tl"), _decode(kwargs, "tl")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = _torch_function(name)(*t_args, **t_kwargs)
            theirs = _resize_warnings(_torch_function(SHARED.get(name, name)), *t_args,
                                      **t_kwargs, out=_wrong_shaped(expected, "torch"))
            ours = _resize_warnings(function, *l_args, **l_kwargs,
                                    out=_wrong_shaped(expected, "tl"))
        except Exception:
            continue  # a sample one library refuses: the parity test's business
        assert bool(ours) == bool(theirs), f"{name}: PyTorch warns {theirs}, tensorlib {ours}"
        return
    pytest.skip(f"{name}: no sample both libraries accept with a wrong-shaped out")


def _wrong_shaped(result: Any, library: str) -> Any:
    if isinstance(result, (tuple, list)):
        return type(result)(_wrong_shaped(r, library) for r in result)
    if library == "torch":
        return torch.zeros((2, 3, 5, 7), dtype=result.dtype)
    return tl.zeros((2, 3, 5, 7), dtype=_tl_dtype(result.dtype))


@pytest.mark.parametrize("library", ["torch", "tl"])
def test_dtype_within_a_kind_or_wider(library):
    module = torch if library == "torch" else tl
    ints = module.tensor([1, 2, 3])
    out = module.empty(0)  # float32: an int64 result is cast
    module.add(ints, ints, out=out)
    assert out.tolist() == [2.0, 4.0, 6.0] and str(out.dtype).endswith("float32")
    with pytest.raises(
        RuntimeError, match="result type Float can't be cast to the desired output type Long"
    ):
        module.exp(module.ones(2), out=module.zeros(2, dtype=module.int64))
    with pytest.raises(
        RuntimeError, match="result type Long can't be cast to the desired output type Bool"
    ):
        module.add(ints, ints, out=module.zeros(3, dtype=module.bool))
    halves = module.zeros(2, dtype=module.float16)  # float64 into float16: the same kind
    module.mul(module.ones(2, dtype=module.float64), 0.5, out=halves)
    assert halves.tolist() == [0.5, 0.5]


AUTOGRAD = (
    r"functions with out=\.\.\. arguments don't support automatic differentiation, but one of "
    r"the arguments requires grad\."
)


@pytest.mark.parametrize("library", ["torch", "tl"])
def test_out_refuses_autograd_in_grad_mode(library):
    module = torch if library == "torch" else tl
    x = module.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"add\(\): " + AUTOGRAD):
        module.add(x, x, out=module.empty(0))
    with pytest.raises(RuntimeError, match=r"sum\(\): " + AUTOGRAD):
        module.sum(x, 0, out=module.empty(0))
    with pytest.raises(RuntimeError, match=AUTOGRAD):  # out requiring grad is refused too
        module.add(module.ones(2), 1.0, out=module.zeros(2, requires_grad=True))
    with pytest.raises(RuntimeError, match=AUTOGRAD):
        module.max(x, 1, out=(module.empty(0), module.empty(0, dtype=module.int64)))
    with module.no_grad():  # outside grad mode it works, into a tensor that requires grad too
        out = module.zeros(2, 3, requires_grad=True)
        assert module.add(x, x, out=out) is out
    assert out.tolist() == [[2.0] * 3] * 2
    # an op with no gradient (a comparison) records nothing, so PyTorch lets it through
    flags = module.empty(0, dtype=module.bool)
    assert module.eq(x, 1.0, out=flags) is flags


def test_the_autograd_refusal_names_the_op_as_pytorch():
    x = tl.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^exp\(\): "):
        tl.exp(x, out=tl.empty(0))
    with pytest.raises(RuntimeError, match=r"^matmul\(\): "):
        tl.matmul(x, x, out=tl.empty(0))


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x, out: m.max(x, 1, out=out),
        lambda m, x, out: m.min(x, 0, keepdim=True, out=out),
        lambda m, x, out: m.sort(x, 1, out=out),
        lambda m, x, out: m.topk(x, 2, out=out),
        lambda m, x, out: m.kthvalue(x, 2, 1, out=out),
        lambda m, x, out: m.cummax(x, 1, out=out),
        lambda m, x, out: m.median(x, 1, out=out),
    ],
    ids=["max", "min", "sort", "topk", "kthvalue", "cummax", "median"],
)
def test_tuple_outs_return_values_and_indices(call):
    (tx, x) = _pair([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
    t_out = (torch.empty(0), torch.empty(0, dtype=torch.int64))
    out = (tl.empty(0), tl.empty(0, dtype=tl.int64))
    t_result, result = call(torch, tx, t_out), call(tl, x, out)
    assert result.values is out[0] and result.indices is out[1]
    assert t_result.values is t_out[0] and t_result.indices is t_out[1]
    for want, have in zip(t_out, out, strict=False):
        np.testing.assert_array_equal(have.numpy(), want.numpy())


def test_other_tuple_outs():
    (tx, x) = _pair([[3.0, 1.0], [0.5, 4.0]], "float64")
    t_out = (torch.empty(0, dtype=torch.float64), torch.empty(0, dtype=torch.float64))
    out = (tl.empty(0, dtype=tl.float64), tl.empty(0, dtype=tl.float64))
    result = tl.aminmax(x, out=out)
    assert result[0] is out[0] and result[1] is out[1]
    torch.aminmax(tx, out=t_out)
    for want, have in zip(t_out, out, strict=False):
        np.testing.assert_array_equal(have.numpy(), want.numpy())
    sign, logabsdet = tl.empty(0, dtype=tl.float64), tl.empty(0, dtype=tl.float64)
    result = tl.linalg.slogdet(x, out=(sign, logabsdet))
    assert result[0] is sign and result[1] is logabsdet
    assert logabsdet.item() == pytest.approx(torch.linalg.slogdet(tx).logabsdet.item())


def test_a_tuple_out_must_match_the_results():
    x = tl.ones(2, 3)
    with pytest.raises(TypeError, match=r"max\(\): argument 'out' must be a tuple of 2 Tensors"):
        tl.max(x, 1, out=tl.empty(0))
    with pytest.raises(TypeError, match=r"exp\(\): argument 'out' must be Tensor, not list"):
        tl.exp(x, out=[tl.empty(0)])


@pytest.mark.parametrize("library", ["torch", "tl"])
def test_creation_functions_make_values_in_outs_dtype(library):
    module = torch if library == "torch" else tl
    longs = module.empty(0, dtype=module.int64)
    assert module.arange(0.5, 3, out=longs) is longs and longs.tolist() == [0, 1, 2]
    assert module.zeros(2, out=module.empty(0, dtype=module.int64)).tolist() == [0, 0]
    assert module.full((2,), 1.5, out=module.empty(0, dtype=module.int64)).tolist() == [1, 1]
    assert module.linspace(0, 1, 3, out=longs).tolist() == [0, 0, 1]
    flags = module.eye(2, out=module.empty(0, dtype=module.bool))
    assert flags.tolist() == [[True, False], [False, True]]
    floats = module.arange(3, out=module.empty(0))
    assert floats.tolist() == [0.0, 1.0, 2.0] and str(floats.dtype).endswith("float32")
    with pytest.raises(
        RuntimeError, match=r"dtype Float does not match dtype of out parameter \(Long\)"
    ):
        module.zeros(2, dtype=module.float32, out=longs)


def test_the_pytorch_tutorial_line():
    """PyTorch's tensors tutorial: ``torch.add(x, y, out=result)``."""
    x, y = tl.rand(5, 3), tl.rand(5, 3)
    result = tl.empty(5, 3)
    tl.add(x, y, out=result)
    np.testing.assert_allclose(result.numpy(), (x + y).numpy())


def test_nn_functional_takes_out_only_where_it_shares_a_function_with_torch_x():
    """PyTorch's nn.functional takes no out=; tensorlib's F.softmax is tl.softmax, which does
    (book/promises.md): these five, and no others."""
    import tensorlib.nn.functional as F

    names = sorted(
        name
        for name in set(F.__all__)
        if callable(getattr(F, name)) and _takes_out(getattr(F, name))
    )
    assert names == ["hardshrink", "log_softmax", "sigmoid", "softmax", "tanh"]
    assert all(getattr(F, name) is getattr(tl, name) for name in names)


# --- review 7: views made under no_grad, tuple outs, exact dtypes, casts --------------------------

@pytest.mark.parametrize("library", ["torch", "tl"])
def test_out_into_a_view_made_under_no_grad_of_a_tensor_requiring_grad_is_refused(library):
    """Such a view is a constant in tensorlib's graph (PyTorch says it requires grad): a write
    into it in grad mode would change ``y`` behind its graph, so both refuse it."""
    module = torch if library == "torch" else tl
    m = module.ones(2, 3, dtype=module.float64, requires_grad=True)
    y = m * 1
    with module.no_grad():
        row, part, leaf_row = y[0], y[0][1:], m[1]
    for out in (row, part, leaf_row):
        with pytest.raises(RuntimeError, match=r"^add\(\): " + AUTOGRAD):
            module.add(module.ones(out.shape, dtype=module.float64), 1, out=out)
    assert y.tolist() == [[1.0] * 3] * 2 and row._version == 0
    with module.no_grad():  # outside grad mode the write goes through
        module.add(module.ones(3, dtype=module.float64), 1, out=row)
    assert y[0].tolist() == [2.0] * 3
    free = y.detach()[1]  # a view of a detached tensor is no one's graph: accepted
    module.add(module.ones(3, dtype=module.float64), 2, out=free)
    assert y[1].tolist() == [3.0] * 3


@pytest.mark.parametrize("library", ["torch", "tl"])
@pytest.mark.parametrize(
    "call",
    [
        lambda m, x, out: m.max(x, 1, out=out),
        lambda m, x, out: m.sort(x, 1, out=out),
        lambda m, x, out: m.topk(x, 2, out=out),
        lambda m, x, out: m.kthvalue(x, 2, 1, out=out),
        lambda m, x, out: m.cummax(x, 1, out=out),
        lambda m, x, out: m.median(x, 1, out=out),
        lambda m, x, out: m.mode(x, 1, out=out),
    ],
    ids=["max", "sort", "topk", "kthvalue", "cummax", "median", "mode"],
)
def test_a_refused_tuple_out_changes_none_of_its_tensors(library, call):
    module = torch if library == "torch" else tl
    x = module.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
    for indices_dtype in (module.bool, module.int32, module.float32):
        values = module.zeros(0)
        with pytest.raises(RuntimeError, match="(?i)scalar.type|to have dtype long int"):
            call(module, x, (values, module.zeros(0, dtype=indices_dtype)))
        # PyTorch resizes values before it checks indices; neither writes them
        assert values._version == 0 and (module is torch or values.shape == (0,))
    values, indices = module.zeros(0, dtype=module.float64), module.zeros(0, dtype=module.int64)
    with pytest.raises(RuntimeError, match="Expected|expected|same type"):  # values: float32
        call(module, x, (values, indices))
    assert values._version == indices._version == 0


def _exact_calls(m: Any) -> dict[str, Any]:
    """Calls whose out PyTorch wants in exactly the result's dtype, and some that cast: each gives
    an out of another dtype of the same kind (or int for an int64 result)."""
    x = m.tensor([[3.0, 1.0], [0.5, 4.0]], dtype=m.float64)
    f32, i32 = m.zeros(0, dtype=m.float32), m.zeros(0, dtype=m.int32)
    return {
        "matmul": lambda: m.matmul(x, x, out=f32),
        "mm": lambda: m.mm(x, x, out=f32),
        "softmax": lambda: m.softmax(x, 1, out=f32),
        "gather": lambda: m.gather(x, 1, m.tensor([[0], [1]]), out=f32),
        "amax": lambda: m.amax(x, 1, out=f32),
        "argmax": lambda: m.argmax(x, 1, out=i32),
        "nonzero": lambda: m.nonzero(x, out=i32),
        "searchsorted": lambda: m.searchsorted(m.tensor([1.0, 2.0]), x, out=i32),
        "abs int64 into float64": lambda: m.abs(m.tensor([1, -2]), out=m.zeros(0, dtype=m.float64)),
        "cumsum dtype=": lambda: m.cumsum(x, 1, dtype=m.float64, out=f32),
        "prod dtype=": lambda: m.prod(x, 1, dtype=m.float64, out=f32),
        "cumprod dtype=": lambda: m.cumprod(x, 1, dtype=m.float64, out=f32),
        # these cast
        "cumsum": lambda: m.cumsum(x, 1, out=f32),
        "prod": lambda: m.prod(x, 1, out=f32),
        "add": lambda: m.add(x, x, out=f32),
        "sum": lambda: m.sum(x, 1, out=f32),
        "max of all": lambda: m.max(x, out=f32),
        "maximum": lambda: m.max(x, x, out=f32),
        "exp": lambda: m.exp(x, out=f32),
        "cat": lambda: m.cat([x, x], out=f32),
    }


@pytest.mark.parametrize("case", list(_exact_calls(tl)))
def test_outs_of_exactly_the_results_dtype_where_pytorch_wants_them(case):
    def outcome(module: Any) -> str:
        try:
            _exact_calls(module)[case]()
        except RuntimeError as error:
            return str(error)
        return "accepted"

    theirs, ours = outcome(torch), outcome(tl)
    assert (ours == "accepted") == (theirs == "accepted"), (theirs, ours)
    if theirs.startswith("Expected out tensor to have dtype"):
        assert ours == theirs


def _another_dtype(result: Any, library: str, position: int | None) -> Any:
    """Empty outs of the results' dtypes, but for ``position`` (all if None) of another dtype of
    the same kind (uint8 for bool)."""
    neighbour = {
        "float64": "float32", "float32": "float64", "float16": "float32", "int64": "int32",
        "int32": "int64", "int16": "int32", "int8": "int16", "uint8": "int16", "bool": "uint8",
    }
    if isinstance(result, (tuple, list)):
        return type(result)(
            _another_dtype(r, library, None) if position in (None, k)
            else _empty_like_results(r, library)
            for k, r in enumerate(result)
        )
    name = neighbour[str(result.dtype).removeprefix("torch.")]
    return torch.zeros(0, dtype=getattr(torch, name)) if library == "torch" else tl.zeros(
        0, dtype=getattr(tl, name)
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", OUT_FUNCTIONS)
def test_out_of_another_dtype_refused_exactly_where_pytorch_refuses_it(name, opinfo_samples):
    """Every function given an out (each of a tuple out in turn) of another dtype of the same
    kind: refused exactly when PyTorch refuses it, else cast."""
    function = _tl_function(name)
    cases = _first_cases(name, opinfo_samples)
    for args, kwargs in cases:
        try:
            t_args, t_kwargs, expected, l_args, l_kwargs, _ = _both_without_out(name, args, kwargs)
        except Exception:
            continue  # a sample one library refuses: the parity test's business
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            count = len(expected) if isinstance(expected, (tuple, list)) else 1
            for position in range(count) if count > 1 else [None]:
                try:
                    _torch_function(SHARED.get(name, name))(
                        *t_args, **t_kwargs, out=_another_dtype(expected, "torch", position)
                    )
                    theirs = "accepted"
                except TypeError:
                    continue  # PyTorch refuses out= for this call (sum without dim)
                except RuntimeError as error:
                    theirs = str(error)
                try:
                    function(*l_args, **l_kwargs, out=_another_dtype(expected, "tl", position))
                    ours = "accepted"
                except RuntimeError as error:
                    ours = str(error)
                agree = (ours == "accepted") == (theirs == "accepted")
                assert agree, (name, position, theirs, ours)
        return
    pytest.skip(f"{name}: no sample both libraries accept")


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.parametrize("target", DTYPES)
@pytest.mark.parametrize("source", DTYPES)
def test_a_result_is_cast_into_out_by_pytorchs_rule(source, target):
    """PyTorch's canCast, for every pair: a float result is refused by an integer or bool out, an
    integer result by a bool out; everything else is cast (int64 into uint8 wraps around)."""
    values = np.array([1, 0, 3, 100], dtype=source)

    def outcome(module: Any) -> Any:
        x = module.tensor(values.copy(), dtype=getattr(module, source))
        out = module.zeros(0, dtype=getattr(module, target))
        try:
            module.add(x, x, out=out)
        except RuntimeError as error:
            return str(error)
        return out.tolist()

    assert outcome(tl) == outcome(torch)


@pytest.mark.parametrize("library", ["torch", "tl"])
def test_an_out_whose_elements_share_memory_is_refused(library):
    """An expanded out gets PyTorch's RuntimeError (not numpy's ValueError), of another shape
    too. An out of overlapping unfold windows to be resized: PyTorch grows it within its base's
    storage; tensorlib, whose numpy view cannot grow, refuses (new memory would end the sharing)."""
    module = torch if library == "torch" else tl
    message = "more than one element of the written-to tensor refers to a single memory location"
    for values in (module.ones(3), module.ones(2)):
        with pytest.raises(RuntimeError, match=message):
            module.add(values, 1, out=module.zeros(1).expand(3))
    windows = module.zeros(4).unfold(0, 2, 1)
    if library == "tl":
        with pytest.raises(RuntimeError, match="shares memory with other tensors"):
            module.add(module.ones(3, 3), 1, out=windows)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # resized, with the warning
        resized = module.add(module.ones(3, 3), 1, out=windows)
    assert resized.tolist() == [[2.0] * 3] * 3


@pytest.mark.parity
def test_an_out_that_shares_memory_keeps_sharing_or_is_refused():
    """Shrinking a view or a base with views keeps the memory, as PyTorch keeps the storage;
    growing a view (PyTorch grows it into its base's storage) is refused, not cut off silently."""
    for library in (torch, tl):
        base = library.zeros(4)
        head = base[:3]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            library.add(library.ones(2), 1, out=base)  # the base shrinks: its view still shares
            tail = library.zeros(4)
            library.add(library.ones(2), 1, out=tail[1:])  # a view shrinks within its base
        assert head.tolist() == [2.0, 2.0, 0.0] and tail.tolist() == [0.0, 2.0, 2.0, 0.0]
    view = tl.zeros(4)[:3]
    with pytest.raises(RuntimeError, match=r"shares memory with other tensors .* new memory"):
        tl.add(tl.ones(4), 1, out=view)
    assert view.shape == (3,)


@pytest.mark.parity
@pytest.mark.parametrize("library", ["torch", "tl"])
def test_clamp_wants_outs_exact_dtype_with_number_bounds_only(library):
    module = torch if library == "torch" else tl
    with pytest.raises(RuntimeError):
        module.clamp(module.ones(3), 0, 1, out=module.empty(3, dtype=module.float64))
    bounds = (module.zeros(3), module.ones(3))  # tensor bounds: cast into out
    written = module.clamp(module.ones(3), *bounds, out=module.empty(3, dtype=module.float64))
    assert str(written.dtype).endswith("float64") and written.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parity
def test_every_out_keeps_its_memory_when_it_shrinks():
    """PyTorch keeps the storage whenever the new size fits: an alias it cannot see
    (``b.detach()``, ``b.data``, ``from_numpy``) writes into ``b``'s first elements, and a plain
    ``out`` of its own memory is resized as before (the review's 2)."""
    for library in (torch, tl):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            detached, data = library.zeros(6), library.zeros(6)
            library.add(library.ones(3), 1, out=detached.detach())
            library.add(library.ones(3), 1, out=data.data)
            array = np.zeros(6, np.float32)
            library.add(library.ones(2), 1, out=library.from_numpy(array))
            own = library.zeros(2, 3)
            written = library.sum(own + library.ones(2, 3), 0, out=own)
            grown = library.zeros(2)
            library.add(library.ones(2, 2), 1, out=grown)
        assert detached.tolist() == data.tolist() == [2.0, 2.0, 2.0, 0.0, 0.0, 0.0]
        assert array.tolist() == [2.0, 2.0, 0.0, 0.0, 0.0, 0.0]
        assert written is own and own.shape == (3,) and own.tolist() == [2.0, 2.0, 2.0]
        assert grown.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    base = tl.zeros(4)
    view = base[1:3]
    with pytest.raises(RuntimeError, match="shares memory with other tensors"):
        tl.add(tl.ones(3), 1, out=view)  # would have to grow: refused, nothing changed
    assert view.shape == (2,) and base.tolist() == [0.0] * 4
    view.fill_(5.0)
    assert base.tolist() == [0.0, 5.0, 5.0, 0.0]
