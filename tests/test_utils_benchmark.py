"""tensorlib.utils.benchmark (chapter 8, section 12.10): Timer, Measurement and Compare, their
statistics and printed layouts compared with torch.utils.benchmark's for known block times; the
Timer's behaviour (blocks, warm-up, thread count) without any timed assertion."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.utils import benchmark
from tensorlib.utils.benchmark import (
    Compare,
    Language,
    Measurement,
    TaskSpec,
    Timer,
    select_unit,
    set_torch_threads,
    trim_sigfig,
    unit_to_english,
)

REPO = Path(__file__).resolve().parent.parent


def _torch_benchmark():
    """PyTorch's module (imported on demand, as ``import torch`` does not import it)."""
    pytest.importorskip("torch")
    import torch.utils.benchmark

    return torch.utils.benchmark


def _random_cases(seed: int, envs: bool = False) -> list[tuple[int, list[float], dict]]:
    """(number_per_run, raw_times, TaskSpec fields) for two labels, two thread counts, three rows
    and three columns, some cells missing, some replicated, spreads from 1% to 60%."""
    rng = np.random.default_rng(seed)
    base = 10 ** rng.uniform(-7, -1)
    cases = []
    for label in ("add", "mul"):
        for threads in (1, 2):
            for sub_label in ("small", "medium", "a much longer row"):
                for description in ("float32", "float64", "int"):
                    if rng.random() < 0.15:
                        continue
                    raw = (1 + rng.choice([0.01, 0.2, 0.6]) * rng.random(int(rng.integers(1, 12))))
                    raw = raw * base * rng.uniform(1, 300)
                    fields = {"stmt": "x * y", "setup": "pass", "label": label,
                              "sub_label": sub_label, "description": description,
                              "num_threads": threads}
                    if envs:
                        fields["env"] = str(rng.choice(["envA", "longer env"]))
                    cases.append((int(rng.integers(1, 100)), raw.tolist(), fields))
                    if rng.random() < 0.3:  # a replicate, for merge
                        cases.append((int(rng.integers(1, 100)), (raw * 1.1).tolist(), fields))
    return cases


def _pair(torch_benchmark, number, raw, fields):
    return (Measurement(number, list(raw), TaskSpec(**fields)),
            torch_benchmark.Measurement(number, list(raw), torch_benchmark.TaskSpec(**fields)))


def _body(measurement) -> list[str]:
    """A measurement's repr without its first line (the object's address)."""
    return repr(measurement).splitlines()[1:]


SUMMARY_FIELDS = [
    {"stmt": "x + y", "setup": "pass"},
    {"stmt": "x + y", "setup": "import numpy", "label": "add", "sub_label": "small"},
    {"stmt": "x + y", "setup": "", "sub_label": "s", "description": "float32"},
    {"stmt": "a = 1\nb = a", "setup": "import x\nimport y"},
    {"stmt": "a = 1\nb = a", "setup": "pass", "sub_label": "two lines", "description": "d"},
    {"stmt": "a = 1\nb = a", "setup": "pass", "label": "L"},
]
TIMES = [[5e-7], [1e-3, 2e-3], [1e-3, 2e-3, 3e-3], [1.0e-4, 1.1e-4, 1.2e-4, 1.6e-4, 1.05e-4],
         [2.0, 2.5, 2.2, 2.1, 9.0], [3e-9, 3.1e-9, 3.05e-9, 2.9e-9, 3e-9, 3e-9]]


@pytest.mark.parity
@pytest.mark.parametrize("fields", SUMMARY_FIELDS)
@pytest.mark.parametrize("times", TIMES)
def test_measurement_repr_and_statistics_match_pytorch(fields, times):
    torch_benchmark = _torch_benchmark()
    ours, theirs = _pair(torch_benchmark, 10, times, fields)
    assert _body(ours) == _body(theirs)
    assert repr(ours).splitlines()[0].startswith("<tensorlib.utils.benchmark.Measurement object")
    for name in ("median", "mean", "iqr"):
        assert getattr(ours, name) == pytest.approx(getattr(theirs, name), rel=1e-12)
    assert ours.times == theirs.times
    assert ours.significant_figures == theirs.significant_figures
    assert ours.has_warnings == theirs.has_warnings
    assert ours.meets_confidence(0.05) == theirs.meets_confidence(0.05)
    assert ((ours.title, ours.env, ours.as_row_name)
            == (theirs.title, theirs.env, theirs.as_row_name))
    assert ours.task_spec.summarize() == theirs.task_spec.summarize()


@pytest.mark.parity
@pytest.mark.parametrize("seed", range(12))
def test_random_measurements_match_pytorch(seed):
    torch_benchmark = _torch_benchmark()
    for number, raw, fields in _random_cases(seed):
        ours, theirs = _pair(torch_benchmark, number, raw, fields)
        assert _body(ours) == _body(theirs)
        assert ours.significant_figures == theirs.significant_figures


@pytest.mark.parity
@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("envs", [False, True])
@pytest.mark.parametrize("options", [(), ("trim",), ("colorize",), ("rowwise",), ("warnings",),
                                     ("trim", "warnings", "colorize")])
def test_compare_tables_match_pytorch(seed, envs, options):
    torch_benchmark = _torch_benchmark()
    pairs = [_pair(torch_benchmark, *case) for case in _random_cases(seed, envs)]
    ours = Compare([p[0] for p in pairs])
    theirs = torch_benchmark.Compare([p[1] for p in pairs])
    for table in (ours, theirs):
        if "trim" in options:
            table.trim_significant_figures()
        if "colorize" in options:
            table.colorize()
        if "rowwise" in options:
            table.colorize(rowwise=True)
        if "warnings" in options:
            table.highlight_warnings()
    assert str(ours) == str(theirs)


@pytest.mark.parity
def test_compare_prints_what_pytorch_prints(capsys):
    torch_benchmark = _torch_benchmark()
    fields = {"stmt": "a @ b", "setup": "pass", "label": "matmul", "sub_label": "64",
              "description": "float32"}
    ours, theirs = _pair(torch_benchmark, 100, [1e-4, 1.2e-4, 1.1e-4, 1e-4], fields)
    Compare([ours]).print()
    printed = capsys.readouterr().out
    torch_benchmark.Compare([theirs]).print()
    assert printed == capsys.readouterr().out
    assert printed.splitlines() == [
        "[----- matmul -----]", "          |  float32", "1 threads: ---------",
        "      64  |    1.1  ", "", "Times are in microseconds (us).", ""]


@pytest.mark.parity
def test_merge_matches_pytorch():
    torch_benchmark = _torch_benchmark()
    pairs = [_pair(torch_benchmark, *case) for case in _random_cases(3)]
    ours = Measurement.merge(p[0] for p in pairs)
    theirs = torch_benchmark.Measurement.merge(p[1] for p in pairs)
    assert len(ours) == len(theirs) < len(pairs)
    for a, b in zip(ours, theirs, strict=True):
        assert (a.number_per_run, a.raw_times, a.metadata) == (b.number_per_run, b.raw_times, None)
        assert a.title == b.title and _body(a) == _body(b)


@pytest.mark.parity
@pytest.mark.parametrize("t", [3.2e-10, 4.5e-9, 1.7e-7, 2.5e-5, 0.0042, 0.77, 12.0, 3600.0])
def test_units_match_pytorch(t):
    torch_benchmark = _torch_benchmark()
    common = torch_benchmark.utils.common
    assert select_unit(t) == common.select_unit(t)
    unit = select_unit(t)[0]
    assert unit_to_english(unit) == common.unit_to_english(unit)


@pytest.mark.parity
@pytest.mark.parametrize(("x", "n"), [(3.14159, 2), (3.14159, 4), (1234.5, 1), (0.0123, 2),
                                      (-98.76, 3), (7.0, 1)])
def test_trim_sigfig_matches_pytorch(x, n):
    torch_benchmark = _torch_benchmark()
    assert trim_sigfig(x, n) == pytest.approx(
        torch_benchmark.utils.common.trim_sigfig(x, n), rel=1e-6)


def test_trim_sigfig_and_select_unit_check_their_arguments():
    with pytest.raises(AssertionError, match="must be an integer"):
        trim_sigfig(3.0, 1.5)
    with pytest.raises(ValueError, match="expected a time > 0 seconds, got 0"):
        select_unit(0)


def _torch_like_lines(text: str) -> list[str]:
    """A measurement's repr, without its address, with every number and unit replaced."""
    lines = [line for line in text.splitlines()[1:] if "WARNING" not in line
             and "This " not in line]
    return [re.sub(r"\b(ns|us|ms|s)\b", "UNIT", re.sub(r"\d+(\.\d+)?", "N", line))
            for line in lines]


@pytest.mark.parity
def test_a_timer_measures_with_pytorchs_layout():
    torch_benchmark = _torch_benchmark()
    kwargs = {"stmt": "y = x * 2", "setup": "x = 3", "label": "double", "sub_label": "int",
              "description": "python"}
    ours = Timer(**kwargs).blocked_autorange(min_run_time=0.01)
    theirs = torch_benchmark.Timer(**kwargs).blocked_autorange(min_run_time=0.01)
    # how many blocks fit in 0.01 s depends on the machine's load at that moment (one block prints
    # without Median and IQR): PyTorch's Measurement is given our times, so both lay out the same
    same = torch_benchmark.Measurement(ours.number_per_run, ours.raw_times, theirs.task_spec)
    assert repr(ours).splitlines()[1:] == repr(same).splitlines()[1:]
    once = Timer(**kwargs).timeit(100)
    assert _torch_like_lines(repr(once)) == _torch_like_lines(
        repr(torch_benchmark.Timer(**kwargs).timeit(100)))
    assert repr(once).splitlines()[-1] == "  1 measurement, 100 runs , 1 thread"


@pytest.mark.parity
def test_timer_signature_matches_pytorch():
    torch_benchmark = _torch_benchmark()
    import inspect

    for name in ("__init__", "timeit", "repeat", "autorange", "blocked_autorange",
                 "adaptive_autorange", "collect_callgrind"):
        ours = inspect.signature(getattr(Timer, name)).parameters
        theirs = inspect.signature(getattr(torch_benchmark.Timer, name)).parameters
        assert list(ours) == list(theirs), name
        for key, parameter in ours.items():
            if key == "language":  # each library's own enum, of the same members
                assert parameter.default.name == theirs[key].default.name
            elif key != "timer":  # each library's own clock
                assert parameter.default == theirs[key].default, (name, key)
                assert parameter.kind == theirs[key].kind, (name, key)
    assert [c.name for c in Language] == [c.name for c in torch_benchmark.Language]
    assert ([c.value for c in benchmark.Colorize]
            == [c.value for c in torch_benchmark.utils.compare.Colorize])


def test_blocked_autorange_times_blocks_until_min_run_time():
    seen = []
    measured = Timer("sum(range(50))").blocked_autorange(
        callback=lambda number, seconds: seen.append((number, seconds)), min_run_time=0.02)
    assert measured.number_per_run >= 1 and len(measured.raw_times) >= 1
    assert seen == [(measured.number_per_run, t) for t in measured.raw_times]
    assert sum(measured.raw_times) >= 0.02
    assert min(measured.times) <= measured.median <= max(measured.times)
    assert measured.times == [t / measured.number_per_run for t in measured.raw_times]
    assert measured.stmt == "sum(range(50))" and measured.num_threads == 1


def test_adaptive_autorange_stops_on_a_steady_iqr_or_max_run_time():
    measured = Timer("pass").adaptive_autorange(threshold=1e9, min_run_time=0.0)
    assert len(measured.raw_times) == 4  # more than 3 blocks is the least it accepts
    capped = Timer("pass").adaptive_autorange(threshold=-1.0, min_run_time=0.0,
                                              max_run_time=0.01)
    assert sum(capped.raw_times) > 0.01 and len(capped.raw_times) >= 1


def test_timeit_is_one_block_after_a_warm_up():
    calls = []
    measured = Timer("calls.append(1)", globals={"calls": calls}).timeit(300)
    assert len(calls) == 3 + 300  # the warm-up runs number // 100 (at least 2) times
    assert measured.number_per_run == 300 and len(measured.raw_times) == 1
    Timer("calls.append(1)", globals={"calls": calls}).timeit(10)
    assert len(calls) == 303 + 2 + 10


def test_num_threads_holds_during_the_run_and_is_restored():
    before = tl.get_num_threads()
    seen = set()
    Timer("seen.add(get())", globals={"seen": seen, "get": tl.get_num_threads},
          num_threads=3).blocked_autorange(min_run_time=0.001)
    assert seen == {3} and tl.get_num_threads() == before
    with pytest.raises(ZeroDivisionError):
        Timer("1 / 0", num_threads=2).timeit(5)
    assert tl.get_num_threads() == before
    with set_torch_threads(2):
        assert tl.get_num_threads() == 2
    assert tl.get_num_threads() == before


def test_globals_setup_and_dedent():
    import tensorlib

    assert Timer("torch.ones(2)")._globals["torch"] is tensorlib
    mine = object()
    assert Timer("torch", globals={"torch": mine})._globals["torch"] is mine
    given = {"x": 1}
    Timer("x", globals=given).timeit(2)
    assert given == {"x": 1}  # copied: the timer's names do not leak back
    timer = Timer("""
        y = x + 1
        z = y * 2
    """, setup="x = tl_ones(2)", globals={"tl_ones": tl.ones})
    assert timer._task_spec.stmt == "y = x + 1\nz = y * 2"
    assert timer.timeit(3).number_per_run == 3


def test_timer_refuses_what_pytorch_refuses_and_what_tensorlib_lacks():
    with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
        Timer(lambda: None)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        Timer("pass", global_setup="int x = 0;")
    with pytest.raises(ValueError, match="Invalid language `rust`."):
        Timer("pass", language="rust")
    for language in ("cpp", "c++", Language.CPP):
        with pytest.raises(NotImplementedError, match="tensorlib compiles no C\\+\\+"):
            Timer("x++;", language=language)
    for method in (Timer().repeat, Timer().autorange):
        with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
            method()
    with pytest.raises(NotImplementedError, match="counts no instructions"):
        Timer().collect_callgrind()
    assert Timer("pass", language="py")._task_spec.stmt == "pass"


def test_compare_checks_its_results_and_allows_a_missing_description():
    with pytest.raises(ValueError,
                       match="Expected an instance of `Measurement`, got <class 'int'>"):
        Compare([1])
    table = Compare([Measurement(1, [2e-6, 2e-6], TaskSpec("x", "pass", label="L"))])
    lines = str(table).splitlines()
    assert lines[1] == "         |     " and lines[3] == "      x  |  2.0"  # PyTorch raises here
    table.extend_results([Measurement(1, [3e-6], TaskSpec("y", "pass", label="L"))])
    assert "      y  |  3.0" in str(table).splitlines()


def test_measurement_reads_its_task_spec_fields():
    m = Measurement(2, [1.0, 3.0], TaskSpec("s", "pass", label="L", sub_label="sub", env="e",
                                            num_threads=4), metadata={"k": 1})
    assert (m.stmt, m.label, m.sub_label, m.env, m.num_threads) == ("s", "L", "sub", "e", 4)
    assert m.times == [0.5, 1.5] and m.median == 1.0 and m.mean == 1.0
    assert m.metadata == {"k": 1}
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        m.nothing  # noqa: B018


def test_torch_utils_benchmark_runs_through_run_as_torch(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import torch\nimport torch.utils.benchmark as benchmark\n"
        "from torch.utils.benchmark.utils.common import Measurement\n"
        "from torch.utils.benchmark.utils.compare import Compare\n"
        "from torch.utils.benchmark.utils.timer import Timer\n"
        "x = torch.ones(32, 32)\n"
        "m = benchmark.Timer('x @ x', globals={'x': x}, label='mm', sub_label='32',\n"
        "                    description='f', num_threads=2).blocked_autorange(min_run_time=0.01)\n"
        "print(isinstance(m, Measurement), Timer is benchmark.Timer, m.number_per_run >= 1,\n"
        "      m.num_threads, str(Compare([m])).splitlines()[2][:11])\n",
        encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "tensorlib.run_as_torch", str(script)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True True True 2 2 threads:"


def test_measurements_pickle_and_copy_as_pytorchs_dataclass_does():
    import copy
    import pickle

    m = Measurement(2, [1.0, 3.0], TaskSpec("s", "pass", label="L"), metadata={"a": 1})
    for other in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert other == m and other.label == "L" and _body(other) == _body(m)
    assert m != Measurement(2, [1.0, 3.0], TaskSpec("s", "pass", label="M"))
