"""Run every benchmark and print one table: ``make bench`` (or ``python benchmarks/run.py``).

Discovers ``benchmarks/bench_*.py``, calls each module's ``run()`` and prints, per row, the
time per call of tensorlib, of a bare numpy implementation and of torch (when installed), all
measured in this process, and the ratios tensorlib/numpy and tensorlib/torch. The rows are
also written to ``.bench/results.json`` with the thread settings and library versions.

Usage::

    python benchmarks/run.py [--only autograd] [--json PATH]
"""

from __future__ import annotations

import os

# Threads are pinned before numpy or torch load: one core each, so ratios compare algorithms,
# not thread pools (the Makefile exports the same variables).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
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
    widths = [max(len(h), *(len(line[i]) for line in lines)) if lines else len(h) for i, h in enumerate(header)]
    out = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths, strict=True)))]
    out.append("  ".join("-" * w for w in widths))
    for line in lines:
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True))))
    return "\n".join(out)


def environment() -> dict:
    import numpy

    env = {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "machine": platform.machine(),
        "threads": {v: os.environ.get(v) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
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
    args = parser.parse_args(argv)

    env = environment()
    threads = ", ".join(f"{k}={v}" for k, v in env["threads"].items())
    print(f"numpy {env['numpy']}, torch {env['torch'] or 'not installed'}; {threads}; times are best of 5, per call")
    results: dict[str, list[dict]] = {}
    for name in discover(args.only):
        module = importlib.import_module(name)
        rows = module.run()
        results[name] = rows
        print(f"\n{name}: {(module.__doc__ or '').strip().splitlines()[0]}")
        print(table(rows))

    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"environment": env, "results": results}, indent=2) + "\n")
    print(f"\nwrote {args.json.relative_to(ROOT) if args.json.is_relative_to(ROOT) else args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
