"""Run PyTorch's own op test samples through tensorlib and report where the two disagree.

PyTorch keeps, for each of its ~700 ops, an ``OpInfo``: the op, its variants, and a generator
of sample inputs that walks the op's corners (0-d and empty tensors, broadcasting, every keyword,
negative dims). This script takes every OpInfo whose op tensorlib has, draws up to ``--samples``
float64 samples, calls PyTorch and tensorlib on the same numbers, and compares

- the outputs: shape, dtype kind, values (``rtol = atol = 1e-5``, NaN equal to NaN);
- the gradients: the outputs that require grad in PyTorch are weighted by one fixed random
  tensor each and summed; the gradients of that sum with respect to every input are compared,
  including "PyTorch has a gradient, tensorlib has none", which is how a detached output that
  would silently drop a path of a larger loss shows up.

A sample PyTorch itself rejects is skipped; a sample tensorlib rejects while PyTorch accepts it is
reported with tensorlib's message. Ops whose result is random (``rand``, ``dropout``, ...) are
skipped, and :data:`KNOWN` lists the differences that are deliberate or that the sample data
cannot judge, each with its reason: those are printed but do not fail the run.

Usage::

    python tools/opinfo_sweep.py                 # every op: about ten minutes on two cores
    python tools/opinfo_sweep.py --only 'masked_fill|remainder' --samples 20
    python tools/opinfo_sweep.py --missing       # also list the OpInfo ops tensorlib lacks

Exit status 0 when every difference is in :data:`KNOWN`, 1 otherwise, 2 (one ``error:`` line)
when PyTorch or its test helpers are not installed: ``pip install torch==2.13.0 expecttest``.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the checkout's tensorlib, also when run from elsewhere
    sys.path.insert(0, str(ROOT))

# ops whose result is random, so no two libraries agree on it
RANDOM_OPS = re.compile(
    r"rand|dropout|normal|bernoulli|multinomial|uniform|poisson|exponential|geometric|cauchy"
    r"|log_normal|empty|rrelu|fractional|randperm|nonzero_static|multi_head_attention_forward"
    r"|scaled_dot_product_attention"
)

# OpInfo name (with its variant after a dot) -> why a difference there is not a bug
KNOWN: dict[str, str] = {
    "cholesky_inverse": "reads one triangle of its input; tensorlib's gradient is that of the "
    "function it computes (zero on the other triangle), PyTorch's that of the symmetric "
    "extension; the two agree on triangular inputs, and the samples are full matrices",
    "cholesky_solve": "as cholesky_inverse: the factor's other triangle is never read",
    "linalg.eigh": "eigenvectors are defined up to sign; the samples compare them raw",
    "linalg.eig": "eigenvectors are defined up to sign; the samples compare them raw",
    "nn.functional.ctc_loss": "tensorlib's gradient with respect to log_probs is the derivative "
    "of the loss; PyTorch's adds exp(log_probs), which cancels only behind a log_softmax "
    "(book/promises.md)",
    "linalg.norm": "ord=0 counts nonzeros: PyTorch returns a broadcast zero gradient of shape (1,)",
    "linalg.norm.subgradients_at_zero": "as linalg.norm",
    "linalg.vector_norm": "as linalg.norm",
    "bfloat16": "numpy has no bfloat16, so tensorlib has none (book/promises.md)",
    "chalf": "tensorlib has no complex dtypes (book/promises.md)",
    "to_sparse": "tensorlib has no sparse tensors (book/promises.md)",
    "as_strided.partial_views": "as_strided reads the input's storage, and the sweep hands "
    "tensorlib a copy of each input, not the larger storage a PyTorch view lies in",
    "native_group_norm": "its mean and rstd outputs carry no gradient (book/promises.md)",
    "nn.functional.triplet_margin_with_distance_loss": "the sample's distance_function is a "
    "PyTorch module, which cannot take tensorlib's tensors",
    "histogramdd": "bins given as edges that do not increase: PyTorch bins anyway, numpy's "
    "histogramdd (tensorlib's) refuses them",
    "tensordot": "PyTorch lets a contracted dimension of size 1 meet one of another size; "
    "tensorlib asks for equal sizes, as numpy's tensordot",
    "linalg.lstsq": "the empty extras of a driver (residuals) do not require grad; PyTorch's do, "
    "and no gradient flows through an empty tensor either way",
    "linalg.lstsq.grad_oriented": "as linalg.lstsq",
    "linalg.slogdet": "as linalg.lstsq: a 0 x 0 matrix's outputs do not require grad",
}


class _Skip(Exception):
    """A sample that holds something tensorlib does not model (complex, sparse, a generator)."""


class _Timeout(Exception):
    pass


class _Missing(Exception):
    """OpInfo's wrapper of the op calls a torch name tensorlib does not have."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


@dataclass
class OpReport:
    """What one OpInfo gave: samples compared, differences found (one line each)."""

    name: str
    compared: int = 0
    differences: list[str] = field(default_factory=list)
    missing: bool = False


class TorchProxy:
    """``torch`` as a program sees it under ``tensorlib.run_as_torch``, without installing the
    import hook (the real torch is imported in this process): ``TorchProxy("torch").nn.functional``
    is tensorlib's ``nn.functional``."""

    def __init__(self, name: str) -> None:
        from tensorlib.run_as_torch import tensorlib_targets

        self._name, self._targets = name, tensorlib_targets(name)

    def __getattr__(self, attribute: str) -> Any:
        from tensorlib.run_as_torch import tensorlib_targets

        full = f"{self._name}.{attribute}"
        for target in self._targets:
            if hasattr(target, attribute):
                value = getattr(target, attribute)
                return TorchProxy(full) if isinstance(value, types.ModuleType) else value
        if tensorlib_targets(full):
            return TorchProxy(full)
        raise AttributeError(f"tensorlib has no {full}")


def tensorlib_op(op: Any) -> Callable[..., Any] | None:
    """tensorlib's version of ``op.op``: the same dotted name, the same Tensor method, or, when
    OpInfo wraps the call in a lambda, that lambda with ``torch`` read as tensorlib."""
    import torch

    call = op.op
    if isinstance(call, types.FunctionType) and call.__name__ == "<lambda>":
        namespace = dict(call.__globals__)
        for key, value in call.__globals__.items():
            if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] == "torch":
                namespace[key] = TorchProxy(value.__name__)
        return types.FunctionType(
            call.__code__, namespace, call.__name__, call.__defaults__, call.__closure__
        )
    proxy: Any = TorchProxy("torch")
    try:
        for part in op.name.split("."):
            proxy = getattr(proxy, part)
        if callable(proxy) and not isinstance(proxy, (np.dtype, TorchProxy)):
            return proxy
    except AttributeError:
        pass
    import tensorlib

    if hasattr(tensorlib.Tensor, op.name) and hasattr(torch.Tensor, op.name):
        return lambda tensor, *args, **kwargs: getattr(tensor, op.name)(*args, **kwargs)
    return None


def to_tensorlib(value: Any, leaves: list[tuple[Any, Any]]) -> Any:
    """``value`` with every torch tensor replaced by a tensorlib tensor of the same numbers;
    each pair (torch leaf, tensorlib leaf) that requires grad is appended to ``leaves``."""
    import torch

    import tensorlib

    if isinstance(value, torch.Tensor):
        if value.is_complex() or value.layout != torch.strided or value.dtype == torch.bfloat16:
            raise _Skip("complex, sparse or bfloat16")
        tensor = tensorlib.tensor(value.detach().numpy().copy())
        if value.requires_grad:
            tensor.requires_grad_(True)
            leaves.append((value, tensor))
        return tensor
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, torch.dtype):
        dtype = getattr(tensorlib, str(value).split(".")[-1], None)
        if not isinstance(dtype, np.dtype):
            raise _Skip(f"dtype {value}")
        return dtype
    if isinstance(value, torch.device):
        return str(value)
    if isinstance(value, (torch.memory_format, torch.layout, torch.Generator)):
        raise _Skip(type(value).__name__)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(to_tensorlib(item, leaves) for item in value))
    if isinstance(value, (list, tuple)):
        return type(value)(to_tensorlib(item, leaves) for item in value)
    if isinstance(value, dict):
        return {key: to_tensorlib(item, leaves) for key, item in value.items()}
    return value


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _array(value: Any) -> np.ndarray:
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().numpy(force=True)  # force: PyTorch's zero-gradient tensors
    if hasattr(value, "detach"):
        return np.asarray(value.detach().numpy())
    return np.asarray(value)


def difference(expected: Any, got: Any) -> str | None:
    """Why ``got`` (tensorlib's) does not match ``expected`` (PyTorch's), or ``None``."""
    want, have = _array(expected), _array(got)
    if want.shape != have.shape:
        return f"shape {have.shape}, PyTorch {want.shape}"
    if want.dtype.kind != have.dtype.kind and not {want.dtype.kind, have.dtype.kind} <= set("iu"):
        return f"dtype {have.dtype}, PyTorch {want.dtype}"
    if want.dtype.kind == "f":
        tolerance = 1e-5 if want.dtype == np.float64 else 1e-3
        a, b = want.astype(np.float64), have.astype(np.float64)
        if not np.allclose(b, a, rtol=tolerance, atol=tolerance, equal_nan=True):
            worst = np.nanmax(np.abs(b - a)) if a.size else 0.0
            return f"values differ by up to {worst:.3g}"
    elif not np.array_equal(want, have):
        return "values differ"
    return None


def _describe(sample: Any) -> str:
    def shape(value: Any) -> Any:
        return tuple(value.shape) if hasattr(value, "shape") else value

    text = f"input {shape(sample.input)}, args {[shape(a) for a in sample.args]}"
    return (text + (f", kwargs {sample.kwargs}" if sample.kwargs else ""))[:240]


def _gradients(outputs: list[Any], inputs: list[Any], backend: Any) -> Any:
    rng = np.random.default_rng(0)
    total = None
    for output in outputs:
        weight = backend.tensor(rng.standard_normal(tuple(output.shape))).to(output.dtype)
        term = (output * weight).sum()
        total = term if total is None else total + term
    return backend.autograd.grad(total, inputs, allow_unused=True)


def _compare_gradients(torch_out: list[Any], tl_out: list[Any],
                       leaves: list[tuple[Any, Any]]) -> str | None:
    import torch

    import tensorlib

    pairs = [(t, o) for t, o in zip(torch_out, tl_out, strict=True)
             if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()]
    if not pairs or not leaves:
        return None
    try:
        expected = _gradients([t for t, _ in pairs], [t for t, _ in leaves], torch)
    except RuntimeError:
        return None  # PyTorch has no gradient here either
    if not all(hasattr(o, "requires_grad") and o.requires_grad for _, o in pairs):
        return "output does not require grad, PyTorch's does (a detached result)"
    try:
        got = _gradients([o for _, o in pairs], [o for _, o in leaves], tensorlib)
    except Exception as error:  # noqa: BLE001  (any exception is the finding)
        return f"backward raises {type(error).__name__}: {str(error).splitlines()[0][:160]}"
    for index, (want, have) in enumerate(zip(expected, got, strict=True)):
        if want is None:
            continue
        if have is None:
            return f"no gradient for input {index}, PyTorch has one"
        problem = difference(want, have)
        if problem:
            return f"gradient of input {index}: {problem}"
    return None


def run_sample(op: Any, call: Callable[..., Any], sample: Any) -> str | None:
    """One sample through both libraries: ``None`` when they agree, else what differs."""
    leaves: list[tuple[Any, Any]] = []
    try:
        args = to_tensorlib([sample.input, *sample.args], leaves)
        kwargs = to_tensorlib(dict(sample.kwargs), leaves)
    except _Skip:
        return None
    try:
        expected = op.op(sample.input, *sample.args, **sample.kwargs)
    except Exception:  # noqa: BLE001  (PyTorch rejects the sample: nothing to compare)
        return None
    try:
        got = call(*args, **kwargs)
    except _Timeout:
        raise
    except AttributeError as error:
        if str(error).startswith("tensorlib has no "):  # a name OpInfo's wrapper reaches for
            raise _Missing(str(error)) from None
        return f"raises AttributeError: {str(error).splitlines()[0][:160]}"
    except Exception as error:  # noqa: BLE001  (any exception is the finding)
        return f"raises {type(error).__name__}: {str(error).splitlines()[0][:160]}"
    want, have = _flatten(expected), _flatten(got)
    if len(want) != len(have):
        return f"{len(have)} outputs, PyTorch {len(want)}"
    for a, b in zip(want, have, strict=True):
        problem = difference(a, b) if hasattr(a, "shape") or isinstance(a, (int, float)) else None
        if problem:
            return f"output: {problem}"
    if op.supports_autograd:
        problem = _compare_gradients(want, have, leaves)
        if problem:
            return problem
    return None


def _samples(op: Any, count: int) -> Iterator[Any]:
    import torch

    generator = op.sample_inputs("cpu", torch.float64, requires_grad=op.supports_autograd)
    for index, sample in enumerate(generator):
        if index == count:
            return
        yield sample


def sweep_op(op: Any, samples: int, seconds: int) -> OpReport:
    """Compare one OpInfo over its first ``samples`` float64 samples."""
    name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
    report = OpReport(name)
    call = tensorlib_op(op)
    if call is None:
        report.missing = True
        return report
    seen: set[str] = set()
    for sample in _samples(op, samples):
        signal.alarm(seconds)
        try:
            problem = run_sample(op, call, sample)
        except _Timeout:
            problem = f"took more than {seconds} s"
        except _Missing:
            report.missing = True
            return report
        finally:
            signal.alarm(0)
        report.compared += 1
        if problem and problem not in seen:
            seen.add(problem)
            report.differences.append(f"{problem} ({_describe(sample)})")
    return report


def load_op_db() -> list[Any]:
    """PyTorch's OpInfo list (needs ``torch`` and ``expecttest``)."""
    warnings.filterwarnings("ignore")
    from torch.testing._internal.common_methods_invocations import op_db

    return list(op_db)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="a regular expression an OpInfo name must match")
    parser.add_argument("--samples", type=int, default=8, help="samples per op (default 8)")
    parser.add_argument("--seconds", type=int, default=20,
                        help="time limit of one sample (default 20)")
    parser.add_argument("--missing", action="store_true", help="list the ops tensorlib lacks")
    parser.add_argument("--json", type=Path, help="also write every op's report here")
    args = parser.parse_args(argv)
    try:
        ops = load_op_db()
    except ImportError as error:
        print(f"error: opinfo_sweep needs PyTorch's test helpers ({error}): "
              "pip install torch==2.13.0 expecttest", file=sys.stderr)
        return 2
    signal.signal(signal.SIGALRM, _on_alarm)
    reports = []
    for op in ops:
        name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        if (args.only and not re.search(args.only, name)) or RANDOM_OPS.search(op.name):
            continue
        report = sweep_op(op, args.samples, args.seconds)
        reports.append(report)
        for line in report.differences:
            print(f"{'known' if name in KNOWN else 'DIFFERS'}  {name}: {line}", flush=True)
    return summarize(reports, args.missing, args.json)


def summarize(reports: list[OpReport], list_missing: bool, json_path: Path | None) -> int:
    """Print the totals (and the missing ops when asked); 1 if a difference is not known."""
    compared = [r for r in reports if not r.missing]
    missing = [r.name for r in reports if r.missing]
    unknown = [r for r in compared if r.differences and r.name not in KNOWN]
    print(f"\n{len(compared)} ops compared over {sum(r.compared for r in compared)} samples; "
          f"{len(unknown)} with differences not in KNOWN, "
          f"{sum(1 for r in compared if r.differences and r.name in KNOWN)} known; "
          f"{len(missing)} OpInfo ops not in tensorlib")
    if list_missing:
        print("missing: " + " ".join(missing))
    if json_path:
        json_path.write_text(json.dumps([r.__dict__ for r in reports], indent=1) + "\n")
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main())
