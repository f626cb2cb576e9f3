"""Run every benchmark and print one table: ``make bench`` (or ``python benchmarks/run.py``).

Discovers ``benchmarks/bench_*.py``, calls each module's ``run()`` and prints, per row, the
time per call of tensorlib, of a bare numpy implementation and of torch (when installed), all
measured in this process, and the ratios tensorlib/numpy and tensorlib/torch. The rows are
also written to ``.bench/results.json`` with the thread settings and library versions.

A module may define ``report(rows) -> str`` to print its own table (bench_gpt.py does). The
header names the CPU (``/proc/cpuinfo``), the core count and numpy's BLAS (threadpoolctl).
``--quick`` (``BENCH_QUICK=1``) times less, for tests: the format stays, the figures are rough.

Usage::

    python benchmarks/run.py [--only autograd] [--json PATH] [--quick]
"""

from __future__ import annotations

import os
import sys

# Threads are pinned before numpy or torch load: one core each, so ratios compare algorithms,
# not thread pools (the Makefile exports the same variables).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

if "--quick" in sys.argv[1:]:  # before the modules read it
    os.environ["BENCH_QUICK"] = "1"

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))


def discover(only: str | None) -> list[str]:
    names = sorted(p.stem for p in HERE.glob("bench_*.py"))
    return [n for n in names if only is None or only in n]


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    micro = seconds * 1e6
    return f"{micro:.2f} us" if micro < 1000 else f"{micro / 1000:.2f} ms"


def fmt_ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def table(rows: list[dict]) -> str:
    header = ["benchmark", "tensorlib", "numpy", "torch", "tl/numpy", "tl/torch"]
    lines = [
        [r["name"], fmt_time(r["tensorlib"]), fmt_time(r.get("numpy")), fmt_time(r.get("torch")),
         fmt_ratio(r["tensorlib"], r.get("numpy")), fmt_ratio(r["tensorlib"], r.get("torch"))]
        for r in rows
    ]
    widths = [
        max(len(h), *(len(line[i]) for line in lines)) if lines else len(h)
        for i, h in enumerate(header)
    ]
    out = [
        "  ".join(
            h.ljust(w) if i == 0 else h.rjust(w)
            for i, (h, w) in enumerate(zip(header, widths, strict=True))
        )
    ]
    out.append("  ".join("-" * w for w in widths))
    for line in lines:
        out.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(line, widths, strict=True))
            )
        )
    return "\n".join(out)


def cpu_model() -> str | None:
    """The CPU's model name from /proc/cpuinfo (Linux), else platform.processor() or None."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(
                (line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None
            )
    except OSError:
        return platform.processor() or None


def numpy_blas() -> list[dict]:
    """numpy's BLAS as threadpoolctl reports it: internal_api, version, num_threads,
    architecture."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - depends on the environment
        return []
    return [{k: d.get(k) for k in ("internal_api", "version", "num_threads", "architecture")}
            for d in threadpool_info() if d.get("user_api") == "blas"]


def environment() -> dict:
    import numpy

    env = {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "machine": platform.machine(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "numpy_blas": numpy_blas(),
        "quick": os.environ.get("BENCH_QUICK") == "1",
        "threads": {
            v: os.environ.get(v)
            for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
        },
    }
    try:
        import torch

        env["torch"] = torch.__version__
        env["torch_threads"] = torch.get_num_threads()
    except ImportError:
        env["torch"] = None
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only the bench_*.py modules whose name contains this")
    parser.add_argument("--json", type=Path, default=ROOT / ".bench" / "results.json")
    parser.add_argument(
        "--quick", action="store_true", help="time less (for tests): same format, rough figures"
    )
    args = parser.parse_args(argv)

    env = environment()
    threads = ", ".join(f"{k}={v}" for k, v in env["threads"].items())
    blas = (
        ", ".join(
            f"{b['internal_api']} {b['version']} ({b['architecture']})" for b in env["numpy_blas"]
        )
        or "unknown"
    )
    print(
        f"CPU: {env['cpu']}, {env['cores']} cores; numpy {env['numpy']} on {blas}; torch "
        f"{env['torch'] or 'not installed'}"
    )
    print(
        f"{threads}; times are best of {5 if not env['quick'] else 1}, per "
        f"call{' (quick mode)' if env['quick'] else ''}"
    )
    results: dict[str, list[dict]] = {}
    for name in discover(args.only):
        module = importlib.import_module(name)
        rows = module.run()
        results[name] = rows
        print(f"\n{name}: {(module.__doc__ or '').strip().splitlines()[0]}")
        print(module.report(rows) if hasattr(module, "report") else table(rows))

    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"environment": env, "results": results}, indent=2) + "\n")
    print(f"\nwrote {args.json.relative_to(ROOT) if args.json.is_relative_to(ROOT) else args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
