"""Chapter 8: ``tensorlib.multiprocessing.spawn`` fails as ``torch.multiprocessing.spawn`` does.

The first process to fail stops the others (terminated, then killed) and its failure is raised at
once, even while another process waits forever on a peer; a traceback larger than a pipe's buffer
reaches the parent (it goes through a file); ``join(timeout)`` waits one timeout in all; exit codes
and signals are named; when two processes raise, a second ``join`` raises the other's traceback,
and no error file is left behind. Processes synchronise through an ``Event`` or a ``Pipe``, never
by sleeping. With torch 2.13 (``parity``): the same failures give the same exception types and
messages.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import sys
import textwrap

import pytest

import tensorlib.multiprocessing as tl_mp

WORKERS = textwrap.dedent("""
    import os
    import signal


    def fail_or_wait(rank, event):
        if rank == 0:
            raise ValueError("process 0 cannot go on")
        event.wait()  # for a peer that never sets it


    def long_error(rank):
        raise ValueError("x" * 200_000)  # a traceback past a pipe's 64 KB buffer


    def wait_then_end(rank, event):
        event.wait()


    def exit_with(rank, code):
        os._exit(code)


    def kill_self(rank):
        os.kill(os.getpid(), signal.SIGKILL)


    def both_raise(rank, left, right):
        if rank == 0:  # the handshake: process 1 raises once process 0 is about to
            left.send("raising")
            raise ValueError("boom 0")
        right.recv()
        raise ValueError("boom 1")
""")


@pytest.fixture(scope="module")
def workers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mp_workers")
    (folder / "tl_mp_workers.py").write_text(WORKERS, encoding="utf-8")
    sys.path.insert(0, str(folder))  # the spawned processes inherit sys.path
    import tl_mp_workers

    yield tl_mp_workers
    sys.path.remove(str(folder))
    sys.modules.pop("tl_mp_workers", None)


def _raised(spawn, fn, args, nprocs):
    """The exception ``spawn`` raises, with its processes, never waiting without a limit."""
    context = spawn(fn, args=args, nprocs=nprocs, join=False)
    with pytest.raises(Exception) as info:  # noqa: PT011 (the type is checked by the caller)
        while not context.join(timeout=120):  # a regression fails the test rather than hang it
            pytest.fail("join(timeout=120) returned with no process ended")
    return info.value, context


def test_the_first_failure_stops_a_blocked_survivor_and_is_raised(workers):
    event = tl_mp.get_context("spawn").Event()  # never set: process 1 waits forever
    error, context = _raised(tl_mp.spawn, workers.fail_or_wait, (event,), 2)
    assert isinstance(error, tl_mp.ProcessRaisedException)
    assert "process 0 cannot go on" in str(error) and "Traceback" in str(error)
    assert error.error_index == 0 and error.error_pid == context.pids()[0] == error.pid
    assert not any(process.is_alive() for process in context.processes)
    assert context.processes[1].exitcode == -signal.SIGTERM  # terminated, as PyTorch does
    with pytest.raises(tl_mp.ProcessExitedException) as again:  # as PyTorch: process 1 was
        context.join()  # stopped, not ended well
    assert str(again.value) == "process 1 terminated with signal SIGTERM"


def test_a_traceback_larger_than_a_pipe_reaches_the_parent(workers):
    error, context = _raised(tl_mp.spawn, workers.long_error, (), 1)
    assert isinstance(error, tl_mp.ProcessRaisedException)
    assert "x" * 200_000 in str(error)
    assert str(error).startswith("\n\n-- Process 0 terminated with the following error:\n")


def test_join_timeout_is_one_timeout_for_all_processes(workers):
    event = tl_mp.get_context("spawn").Event()
    context = tl_mp.spawn(workers.wait_then_end, args=(event,), nprocs=2, join=False)
    assert context.join(timeout=0.05) is False  # both still wait on the event
    event.set()  # the handshake: now both end
    while not context.join():
        pass
    assert [process.exitcode for process in context.processes] == [0, 0]


def test_exit_codes_and_signals_are_named(workers):
    error, _ = _raised(tl_mp.spawn, workers.exit_with, (3,), 1)
    assert isinstance(error, tl_mp.ProcessExitedException)
    assert str(error) == "process 0 terminated with exit code 3"
    assert (error.exit_code, error.signal_name) == (3, None)
    error, _ = _raised(tl_mp.spawn, workers.kill_self, (), 1)
    assert str(error) == "process 0 terminated with signal SIGKILL"
    assert (error.exit_code, error.signal_name) == (-signal.SIGKILL, "SIGKILL")


def test_the_exceptions_pickle():
    raised = pickle.loads(pickle.dumps(tl_mp.ProcessRaisedException("boom", 1, 42)))
    assert (str(raised), raised.error_index, raised.error_pid) == ("boom", 1, 42)
    exited = pickle.loads(pickle.dumps(tl_mp.ProcessExitedException("x", 0, 7, -9, "SIGKILL")))
    assert (exited.exit_code, exited.signal_name, exited.pid) == (-9, "SIGKILL", 7)


@pytest.mark.parity
def test_failures_as_torch(workers):
    torch_mp = pytest.importorskip("torch.multiprocessing")
    event = torch_mp.get_context("spawn").Event()
    theirs, context = _raised(torch_mp.spawn, workers.fail_or_wait, (event,), 2)
    ours, ours_context = _raised(tl_mp.spawn, workers.fail_or_wait, (event,), 2)
    assert type(theirs).__name__ == type(ours).__name__ == "ProcessRaisedException"
    assert context.processes[1].exitcode == -signal.SIGTERM
    assert str(ours).split("Traceback")[0] == str(theirs).split("Traceback")[0]
    assert str(ours).splitlines()[-1] == str(theirs).splitlines()[-1]
    with pytest.raises(torch_mp.ProcessExitedException) as theirs_again:
        context.join()
    with pytest.raises(tl_mp.ProcessExitedException) as ours_again:
        ours_context.join()
    assert str(ours_again.value) == str(theirs_again.value)
    theirs, _ = _raised(torch_mp.spawn, workers.long_error, (), 1)
    assert "x" * 200_000 in str(theirs)
    theirs, _ = _raised(torch_mp.spawn, workers.exit_with, (3,), 1)
    ours, _ = _raised(tl_mp.spawn, workers.exit_with, (3,), 1)
    assert str(ours) == str(theirs) and ours.exit_code == theirs.exit_code == 3


def _both_raise(mp, workers):
    """A context of ``mp.spawn`` whose two processes both raise (process 1 after a pipe
    handshake with process 0)."""
    left, right = mp.get_context("spawn").Pipe()
    return mp.spawn(workers.both_raise, args=(left, right), nprocs=2, join=False)


def _join_failures(mp, context):
    """What two ``join`` calls raise, each waiting for the stopped process to end by itself (a
    generous grace period: no process is terminated), then what a third returns."""
    raised = []
    for _ in range(2):
        with pytest.raises(mp.ProcessRaisedException) as info:
            context.join(timeout=120, grace_period=120)  # a regression fails, not hangs
        raised.append((info.value.error_index, str(info.value).rstrip().splitlines()[-1]))
    return sorted(raised), context.join(timeout=120)


def test_a_second_join_raises_the_other_process_traceback(workers):
    """Two processes raise: each join raises one's traceback (PyTorch keeps every error file
    until read), and no error file is left once every process has been joined."""
    context = _both_raise(tl_mp, workers)
    raised, last = _join_failures(tl_mp, context)
    assert raised == [(0, "ValueError: boom 0"), (1, "ValueError: boom 1")]
    assert last is True
    assert not any(os.path.exists(path) for path in context.error_files)


def test_unread_error_files_go_when_the_context_is_collected(workers):
    """Only the reported process's error file goes with its failure; the other's stays for the
    next join, and goes when the context is collected without that join."""
    context = _both_raise(tl_mp, workers)
    paths = list(context.error_files)
    try:
        context.join(timeout=120, grace_period=120)
    except tl_mp.ProcessRaisedException as error:
        reported = error.error_index
    else:
        pytest.fail("join did not raise")
    assert not os.path.exists(paths[reported])
    assert os.path.exists(paths[1 - reported])  # process 1 - reported raised too: not yet read
    del context
    gc.collect()
    assert not any(os.path.exists(path) for path in paths)


@pytest.mark.parity
def test_a_second_join_as_torch(workers):
    torch_mp = pytest.importorskip("torch.multiprocessing")
    assert _join_failures(tl_mp, _both_raise(tl_mp, workers)) == _join_failures(
        torch_mp, _both_raise(torch_mp, workers)
    )
