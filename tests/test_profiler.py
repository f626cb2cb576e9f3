"""tensorlib.profiler (chapter 8, section 12.11): torch.profiler's names, table and schedule.

No timed asserts: the tests compare names, call counts, nesting, the table's layout (with the same
made-up times in both libraries), the schedules' actions and the trace's structure.
"""

import gzip
import json
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.profiler import (
    EventList,
    FunctionEvent,
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

SCHEDULES = [  # (wait, warmup, active, repeat, skip_first)
    (1, 1, 2, 1, 0), (0, 1, 1, 2, 0), (2, 1, 3, 0, 1), (1, 2, 1, 3, 2), (0, 0, 2, 2, 0),
    (3, 2, 2, 1, 4), (1, 1, 1, 0, 0),
]


def _net(lib):
    """Linear(4, 8), ReLU, Linear(8, 2) with the same weights in tensorlib or torch."""
    rng = np.random.default_rng(0)
    net = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return net


def _step(lib, net):
    x = lib.tensor(np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32))
    with record_function("train_step") if lib is tl else lib.profiler.record_function(
            "train_step"):
        net(x).relu().sum().backward()


def _profiled(**kwargs):
    net = _net(tl)
    with profile(**kwargs) as prof:
        _step(tl, net)
    return prof


def test_names_counts_and_nesting():
    prof = _profiled(with_modules=True)
    counts = {a.key: a.count for a in prof.key_averages()}
    assert counts == {
        "train_step": 1, "nn.Module: Sequential_0": 1, "nn.Module: Linear_0": 1,
        "nn.Module: Linear_1": 1, "nn.Module: ReLU_0": 1, "Linear": 2, "Relu": 2, "Sum": 1,
        "SumBackward": 1, "ReluBackward": 2, "LinearBackward": 2,
    }, counts
    events = prof.events()
    assert [e.id for e in events] == sorted(e.id for e in events)
    top = [e for e in events if e.cpu_parent is None]
    assert [e.name for e in top] == ["train_step"]
    for event in events:
        assert 0 <= event.self_cpu_time_total <= event.cpu_time_total
        for child in event.cpu_children:
            assert child.cpu_parent is event
            assert event.start_us <= child.start_us <= child.end_us <= event.end_us
    total = events.self_cpu_time_total
    assert total == pytest.approx(top[0].cpu_time_total)
    assert prof.key_averages().self_cpu_time_total == pytest.approx(total)


def test_modules_only_when_asked_and_shapes():
    prof = _profiled(record_shapes=True)
    names = {a.key for a in prof.key_averages()}
    assert not any(name.startswith("nn.Module") for name in names)
    shaped = prof.key_averages(group_by_input_shape=True)
    assert sorted(a.input_shapes for a in shaped if a.key == "Linear") == [
        [[5, 4], [8, 4], [8]], [[5, 8], [2, 8], [2]]]
    assert prof.key_averages().table().splitlines()[1].split("  ")[-2:] != ["Input Shapes", ""]
    assert "Input Shapes" in shaped.table().splitlines()[1]


def test_table_shares_add_up():
    lines = _profiled().key_averages().table(sort_by="self_cpu_time_total").splitlines()
    rows = lines[3:-2]
    shares = [float(row.split()[-6].rstrip("%")) for row in rows]
    assert abs(sum(shares) - 100) <= 0.005 * len(rows) + 1e-9
    assert shares == sorted(shares, reverse=True)
    assert lines[-1].startswith("Self CPU time total: ")
    assert len(_profiled().key_averages().table(row_limit=3).splitlines()) == 3 + 3 + 2


def test_record_function_decorator_and_idle():
    @record_function("helper")
    def helper(x):
        return x * 2

    assert helper(tl.ones(2)).tolist() == [2.0, 2.0]  # no profile: nothing recorded, no error
    with profile() as prof:
        helper(tl.ones(2))
        helper(tl.ones(2))
    helper_events = [e for e in prof.events() if e.name == "helper"]
    assert len(helper_events) == 2 and all(e.is_user_annotation for e in helper_events)
    assert [c.name for c in helper_events[0].cpu_children] == ["Mul"]


def test_profile_function_restored_and_idle_by_default():
    def outer(frame, event, arg):
        return None

    sys.setprofile(outer)
    try:
        with profile():
            tl.ones(2) + tl.ones(2)
        assert sys.getprofile() is outer
    finally:
        sys.setprofile(None)
    with profile():
        pass
    assert sys.getprofile() is None and threading.getprofile() is None


class _Boom(tl.Function):
    def forward(self, x):
        raise ValueError("boom")


def test_threads_started_while_recording_and_errors_inside_ops():
    def work():
        tl.ones(3) * tl.ones(3)

    with profile() as prof:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        with pytest.raises(ValueError, match="boom"), record_function("failing"):
            _Boom.apply(tl.ones(2))
        tl.ones(2) + tl.ones(2)
    by_name = {e.name: e for e in prof.events()}
    assert by_name["Mul"].thread != by_name["Add"].thread == threading.get_ident()
    assert by_name["Boom"].cpu_parent is by_name["failing"]
    assert by_name["failing"].cpu_parent is None and by_name["Add"].cpu_parent is None


def test_errors():
    with pytest.raises(AssertionError, match="active=0 \\(need > 0\\)"):
        schedule(wait=1, warmup=1, active=0)
    with pytest.raises(AssertionError, match="Step must be non-negative. Got -1."):
        schedule(wait=1, warmup=1, active=1)(-1)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        schedule(wait=1, warmup=0, active=1)
    with pytest.warns(UserWarning, match="CUDA is not available, disabling CUDA profiling"):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            pass
    with pytest.raises(AssertionError, match="No activities specified"):
        with profile(activities=[]):
            pass
    with pytest.raises(RuntimeError, match="nothing recorded yet"):
        profile().events()
    with pytest.raises(TypeError, match="expected a str name, got int"):
        record_function(3)
    with pytest.raises(AttributeError, match="expected one of"):
        _profiled().key_averages().table(sort_by="flops")
    with pytest.raises(ValueError, match="DEVICE_STOPPED"):
        with profile(schedule=lambda step: ProfilerAction.DEVICE_STOPPED if step else
                     ProfilerAction.RECORD) as prof:
            prof.step()
    with profile() as prof, pytest.raises(RuntimeError, match="one records at a time"):
        with profile():
            pass
    assert supported_activities() == {ProfilerActivity.CPU}


def test_chrome_trace_and_tensorboard_handler(tmp_path):
    prof = _profiled(record_shapes=True, with_modules=True)
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    trace = json.loads((tmp_path / "t.json").read_text())
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(spans) == len(prof.events())
    assert {e["cat"] for e in spans} == {"cpu_op", "user_annotation", "python_function"}
    for span in spans:
        assert set(span) == {"ph", "cat", "name", "pid", "tid", "ts", "dur", "args"}
        assert span["dur"] >= 0
    linear = next(e for e in spans if e["name"] == "Linear")
    assert linear["args"]["Input Dims"] == [[5, 4], [8, 4], [8]]
    net = _net(tl)
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=2),
                 on_trace_ready=tensorboard_trace_handler(str(tmp_path / "tb"), "w",
                                                          use_gzip=True)) as looped:
        for _ in range(4):
            _step(tl, net)
            looped.step()
    files = sorted(p.name for p in (tmp_path / "tb").iterdir())
    assert len(files) == 2 and all(f.startswith("w.") and f.endswith(".pt.trace.json.gz")
                                   for f in files)
    with gzip.open(tmp_path / "tb" / files[0], "rt") as file:
        assert "traceEvents" in json.load(file)


# ---- parity with torch.profiler ----------------------------------------------------------------

@pytest.mark.parity
@pytest.mark.parametrize("args", SCHEDULES)
def test_schedule_matches_torch(args):
    torch = pytest.importorskip("torch")
    wait, warmup, active, repeat, skip_first = args
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for skip_first_wait in (0, 1):
            kwargs = dict(wait=wait, warmup=warmup, active=active, repeat=repeat,
                          skip_first=skip_first, skip_first_wait=skip_first_wait)
            ours, theirs = schedule(**kwargs), torch.profiler.schedule(**kwargs)
            assert [ours(s).name for s in range(40)] == [theirs(s).name for s in range(40)]
    assert [a.name for a in ProfilerAction] == [a.name for a in torch.profiler.ProfilerAction]
    assert [a.value for a in ProfilerAction] == [a.value for a in torch.profiler.ProfilerAction]


def _loop(lib, sched, steps=9):
    """The steps at which on_trace_ready ran, and the ProfilerStep ranges of the last trace."""
    net, ready = _net(lib), []
    prof_module = tl.profiler if lib is tl else lib.profiler
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with prof_module.profile(schedule=sched, on_trace_ready=lambda p: ready.append(
                (p.step_num, [(a.key, a.count) for a in p.key_averages()
                              if a.key.startswith("ProfilerStep")]))) as prof:
            for _ in range(steps):
                _step(lib, net)
                prof.step()
    return ready


@pytest.mark.parity
@pytest.mark.parametrize("args", SCHEDULES[:4])
def test_profile_with_schedule_matches_torch(args):
    torch = pytest.importorskip("torch")
    wait, warmup, active, repeat, skip_first = args
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = schedule(wait=wait, warmup=warmup, active=active, repeat=repeat,
                        skip_first=skip_first)
        theirs = torch.profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat,
                                         skip_first=skip_first)
    assert _loop(tl, ours) == _loop(torch, theirs)


@pytest.mark.parity
def test_names_and_counts_match_torch_structurally():
    torch = pytest.importorskip("torch")
    net = _net(torch)
    with torch.profiler.profile(with_stack=True) as theirs:
        _step(torch, net)
    counts = {a.key: a.count for a in theirs.key_averages()}
    ours = {a.key: a.count for a in _profiled(with_modules=True).key_averages()}
    # tensorlib's Function class -> the ATen operator (or autograd node) PyTorch records; not
    # Sum: PyTorch's AddmmBackward0 calls aten::sum for the bias's gradient, ours calls numpy
    same = {"train_step": "train_step", "Linear": "aten::linear", "Relu": "aten::relu",
            "LinearBackward": "AddmmBackward0",
            "ReluBackward": "ReluBackward0", "SumBackward": "SumBackward0",
            "nn.Module: Sequential_0": "nn.Module: Sequential_0",
            "nn.Module: Linear_0": "nn.Module: Linear_0",
            "nn.Module: Linear_1": "nn.Module: Linear_1",
            "nn.Module: ReLU_0": "nn.Module: ReLU_0"}
    assert {name: ours[name] for name in same} == {name: counts[aten] for name, aten in
                                                    same.items()}
    assert [e.is_user_annotation for e in theirs.events() if e.name == "train_step"] == [True]


def _tree(lib_event, lib_list):
    """The same made-up events in either library: a range with two ops inside, twice."""
    specs = [(1, "step", 0, 1000, None, []), (2, "Linear", 10, 400, 1, [[5, 4], [8, 4], [8]]),
             (3, "MatMul", 20, 300, 2, [[5, 4], [4, 8]]), (4, "Relu", 450, 470, 1, [[5, 8]]),
             (5, "step", 2000, 2500, None, []), (6, "Linear", 2010, 2300, 5, [[5, 4], [8, 4], [8]]),
             (7, "a_rather_long_operation_name_that_is_cut_by_the_table_x", 2300, 2310, 5, [])]
    events = {}
    for id, name, start, end, parent, shapes in specs:
        extra = {} if lib_list is EventList else {"stack": []}  # PyTorch's averages cut stacks
        event = lib_event(id, name, 1, float(start), float(end), input_shapes=shapes, **extra)
        events[id] = event
        if parent is not None and lib_list is EventList:
            events[parent].cpu_children.append(event)
            event.cpu_parent = events[parent]
    made = lib_list(events.values())
    if lib_list is not EventList:
        made._build_tree()  # PyTorch's own nesting, from the times
    return made


@pytest.mark.parity
@pytest.mark.parametrize("sort_by", [None, "cpu_time_total", "self_cpu_time_total", "count"])
@pytest.mark.parametrize("by_shape", [False, True])
def test_table_matches_torch_line_for_line(sort_by, by_shape):
    torch = pytest.importorskip("torch")
    from torch.autograd import profiler_util
    ours = _tree(FunctionEvent, EventList).key_averages(group_by_input_shapes=by_shape)
    theirs = _tree(profiler_util.FunctionEvent, profiler_util.EventList).key_averages(
        group_by_input_shapes=by_shape)
    for row_limit, time_unit in [(100, None), (2, None), (100, "ms"), (3, "s"), (100, "us")]:
        kwargs = dict(sort_by=sort_by, row_limit=row_limit, time_unit=time_unit)
        assert ours.table(**kwargs) == theirs.table(**kwargs)
    assert ours.table(header="a title", top_level_events_only=True) == theirs.table(
        header="a title", top_level_events_only=True)
    assert [(a.key, a.count) for a in ours] == [(a.key, a.count) for a in theirs]
    assert torch is not None


@pytest.mark.parity
def test_table_header_and_trace_layout_match_torch(tmp_path):
    torch = pytest.importorskip("torch")
    net = _net(torch)
    with torch.profiler.profile(record_shapes=True) as theirs:
        _step(torch, net)
    ours = _profiled(record_shapes=True)
    for grouped in (False, True):
        header = [t.key_averages(group_by_input_shape=grouped).table().splitlines()[1].split()
                  for t in (ours, theirs)]
        assert header[0] == header[1]
    theirs.export_chrome_trace(str(tmp_path / "theirs.json"))
    ours.export_chrome_trace(str(tmp_path / "ours.json"))
    traces = [json.loads((tmp_path / f"{who}.json").read_text()) for who in ("ours", "theirs")]
    assert set(traces[0]) <= set(traces[1])
    spans = [[e for e in t["traceEvents"] if e.get("ph") == "X"] for t in traces]
    assert {e["cat"] for e in spans[0]} <= {e["cat"] for e in spans[1]} | {"python_function"}
    assert all(set(e) == set(spans[1][0]) for e in spans[0])
    assert {e["name"] for e in traces[0]["traceEvents"] if e["ph"] == "M"} <= {
        e["name"] for e in traces[1]["traceEvents"] if e["ph"] == "M"}


@pytest.mark.parity
def test_activities_match_torch():
    torch = pytest.importorskip("torch")
    assert [a.name for a in ProfilerActivity] == list(
        torch.profiler.ProfilerActivity.__members__)
    with pytest.warns(UserWarning, match="CUDA is not available, disabling CUDA profiling"):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]):
            pass


def test_torch_profiler_program_runs_on_tensorlib(tmp_path):
    script = tmp_path / "prof.py"
    script.write_text(
        "import torch\n"
        "from torch.profiler import ProfilerActivity, profile, record_function\n"
        "m = torch.nn.Linear(4, 2)\n"
        "with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:\n"
        "    with record_function('fwd'):\n"
        "        m(torch.randn(3, 4)).sum().backward()\n"
        "print(sorted(a.key for a in prof.key_averages()))\n"
    )
    done = subprocess.run([sys.executable, "-m", "tensorlib.run_as_torch", str(script)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['Linear', 'LinearBackward', 'Sum', 'SumBackward', 'fwd']"


def test_record_function_decorator_nests_in_recursion():
    @record_function("count_down")
    def count_down(n):
        return tl.ones(1) if n == 0 else count_down(n - 1) + 1

    with profile() as prof:
        count_down(2)
    ranges = [e for e in prof.events() if e.name == "count_down"]
    assert len(ranges) == 3
    assert ranges[1].cpu_parent is ranges[0] and ranges[2].cpu_parent is ranges[1]


# --- torch.autograd.profiler: the older profiler (legacy_profile) -------------------------------


@pytest.mark.parity
def test_the_older_profilers_names_and_signature_are_torchs():
    torch = pytest.importorskip("torch")
    import inspect

    ours, theirs = tl.autograd.profiler, torch.autograd.profiler
    for name in ["profile", "record_function", "EventList", "FunctionEvent"]:
        assert hasattr(ours, name), name
    ours_params = list(inspect.signature(ours.profile.__init__).parameters)
    theirs_params = list(inspect.signature(theirs.profile.__init__).parameters)
    assert ours_params == theirs_params
    assert ours.record_function is tl.profiler.record_function


@pytest.mark.parity
def test_the_older_profiler_behaves_as_torchs_before_during_and_after():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        unfinished = lib.autograd.profiler.profile()
        assert str(unfinished) == "<unfinished torch.autograd.profile>"
        with lib.autograd.profiler.profile(enabled=False) as off:
            assert off is None
        with lib.autograd.profiler.profile() as prof:
            with pytest.raises(RuntimeError, match="not reentrant"):
                prof.__enter__()
            with lib.autograd.profiler.record_function("phase"):
                (lib.ones(3, 3, requires_grad=True) * 2).sum().backward()
        names = {event.name for event in prof.function_events}
        assert "phase" in names
        assert prof.table().splitlines()[1].split()[:2] == ["Name", "Self"]
        assert prof.self_cpu_time_total > 0
        prof.total_average()  # sums every event without raising, in both
    with pytest.raises(RuntimeError, match="didn't finish running"):
        tl.autograd.profiler.profile().table()


def test_a_program_using_the_older_profiler_runs_unchanged(tmp_path):
    script = tmp_path / "old_profiler.py"
    script.write_text(
        "import torch\n"
        "model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU())\n"
        "with torch.autograd.profiler.profile(record_shapes=True) as prof:\n"
        "    with torch.autograd.profiler.record_function('train_step'):\n"
        "        model(torch.randn(16, 4)).sum().backward()\n"
        "rows = prof.key_averages().table(sort_by='self_cpu_time_total').splitlines()\n"
        "print(rows[1].split()[:2], 'train_step' in str(prof))\n"
    )
    done = subprocess.run([sys.executable, "-m", "tensorlib.run_as_torch", str(script)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['Name', 'Self'] True"
