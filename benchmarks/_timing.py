"""Timing helpers shared by the ``bench_*.py`` modules (see benchmarks/README.md).

A row is a plain dict: ``name`` plus the seconds per call of each implementation, ``tensorlib``,
``numpy`` and ``torch`` (``None`` when an implementation does not apply or is not installed).
"""

from __future__ import annotations

import os
import timeit
from collections.abc import Callable

try:  # torch is optional: the torch column stays empty without it
    import torch

    torch.set_num_threads(1)  # one thread, like numpy under OPENBLAS_NUM_THREADS=1
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

QUICK = os.environ.get("BENCH_QUICK") == "1"  # run.py --quick: rough figures, for tests
REPEAT = 1 if QUICK else 5
TARGET_SECONDS = 0.005 if QUICK else 0.05


def best_of(
    fn: Callable[[], object] | None, repeat: int = REPEAT, target: float = TARGET_SECONDS
) -> float | None:
    """Seconds per call of ``fn``: the best of ``repeat`` timeit runs of about ``target`` s each.

    The best run, not the mean: noise from other processes only ever adds time.
    """
    if fn is None:
        return None
    fn()  # warm up caches and lazy imports outside the measurement
    timer = timeit.Timer(fn)
    number, elapsed = timer.autorange()
    number = max(1, int(number * target / max(elapsed, 1e-9)))
    return min(timer.repeat(repeat=repeat, number=number)) / number


def row(
    name: str,
    tensorlib: Callable | None,
    numpy: Callable | None = None,
    torch_fn: Callable | None = None,
    **extra,
) -> dict:
    """Time the three implementations of one benchmark and return its row."""
    return {
        "name": name,
        "tensorlib": best_of(tensorlib),
        "numpy": best_of(numpy),
        "torch": best_of(torch_fn) if torch is not None else None,
        **extra,
    }
