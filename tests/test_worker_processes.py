"""tensorlib.gpt.worker_processes (chapter 8, section 12.8): micro-batches in forked worker
processes, with micro_batch_backward's bits, errors and lifetime."""

from __future__ import annotations

import os
import signal
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.gpt import GPT, GPTConfig, MicroBatchProcesses
from tensorlib.gpt.data import load_corpus
from tensorlib.gpt.data_parallel import micro_batch_backward
from tensorlib.gpt.train import TrainConfig, Trainer
from tensorlib.gpt.worker_processes import processes_available

CONFIG = GPTConfig(block_size=16, vocab_size=30, n_layer=2, n_head=2, n_embd=32)
needs_fork = pytest.mark.skipif(not processes_available(), reason="forks workers on Linux only")


def batch(n=7, seed=0):
    ids = tl.tensor(np.random.default_rng(seed).integers(0, CONFIG.vocab_size, (n, 17)))
    return ids[:, :-1], ids[:, 1:]


def steps(model, backward, count=3):
    """``count`` AdamW steps, the gradients from ``backward()``; the losses and the parameters."""
    optimizer = tl.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(count):
        optimizer.zero_grad()
        losses.append(backward().item())
        optimizer.step()
    return losses, [p.numpy().tobytes() for p in model.parameters()]


def started(threads, micro_batches=2):
    """At two threads: a model, a batch of 4 and a MicroBatchProcesses that has run it once (its
    workers forked)."""
    threads(2)
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(4)
    parts = MicroBatchProcesses(lambda xs, ys: model(xs, ys)[1], model.parameters(), micro_batches)
    parts.backward(x, y)
    return model, x, y, parts


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@needs_fork
@pytest.mark.parametrize("micro_batches", [2, 3])
def test_the_same_bits_as_micro_batch_backward_over_optimizer_steps(threads, micro_batches):
    threads(2)
    x, y = batch()
    model = GPT(CONFIG, tl.Generator(0))
    loss_fn = lambda xs, ys: model(xs, ys)[1]  # noqa: E731
    expected = steps(
        model, lambda: micro_batch_backward(loss_fn, (x, y), model.parameters(), micro_batches)
    )
    model = GPT(CONFIG, tl.Generator(0))
    loss_fn = lambda xs, ys: model(xs, ys)[1]  # noqa: E731
    with MicroBatchProcesses(loss_fn, model.parameters(), micro_batches) as parts:
        got = steps(model, lambda: parts.backward(x, y))  # the workers see each step's weights
        assert len(parts.pids) == micro_batches - 1
    assert got == expected


@needs_fork
def test_it_accumulates_into_grad_and_returns_a_detached_loss(threads):
    threads(2)
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(4)
    with MicroBatchProcesses(lambda xs, ys: model(xs, ys)[1], model.parameters()) as parts:
        loss = parts.backward(x, y)
        once = [p.grad.numpy().copy() for p in model.parameters()]
        parts.backward(x, y)
    assert loss.grad_fn is None and loss.shape == () and loss.dtype == np.float32
    for p, g in zip(model.parameters(), once, strict=True):
        np.testing.assert_allclose(p.grad.numpy(), 2 * g, rtol=1e-6, atol=1e-7)


def test_at_one_thread_no_worker_is_forked(threads):
    threads(1)
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(4)
    parts = MicroBatchProcesses(lambda xs, ys: model(xs, ys)[1], model.parameters())
    loss = parts.backward(x, y)
    model.zero_grad()
    expected = micro_batch_backward(lambda xs, ys: model(xs, ys)[1], (x, y), model.parameters())
    assert parts.pids == [] and loss.item() == expected.item()
    parts.close()


@needs_fork
def test_a_failing_part_raises_in_the_caller_and_leaves_grad_untouched(threads):
    threads(2)
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(5)  # parts of 3 and 2 sequences

    def loss_fn(xs, ys):
        if xs.shape[0] == 2:  # the worker's part
            raise ValueError("no such token")
        return model(xs, ys)[1]

    with MicroBatchProcesses(loss_fn, model.parameters()) as parts:
        where = r"\(raised at test_worker_processes.py:\d+\)"
        with pytest.raises(RuntimeError, match="part 1: ValueError: no such token " + where):
            parts.backward(x, y)
        assert all(p.grad is None for p in model.parameters())
        # the worker lives on: the next batch, parts of 3 and 3 sequences, works
        x6, y6 = batch(6)
        assert np.isfinite(parts.backward(x6, y6).item())


@needs_fork
def test_a_failing_first_part_raises_its_own_error_and_keeps_the_pipes_in_step(threads):
    threads(2)
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(5)

    def loss_fn(xs, ys):
        if xs.shape[0] == 3:  # part 0, in the caller
            return model(xs, ys)[0]
        return model(xs, ys)[1]

    with MicroBatchProcesses(loss_fn, model.parameters()) as parts:
        with pytest.raises(ValueError, match=r"one-element tensor, got \(3, 16, 30\)"):
            parts.backward(x, y)
        assert all(p.grad is None for p in model.parameters())
        x4, y4 = batch(4)  # the worker's reply to the failed batch was read: this one's is fresh
        loss = parts.backward(x4, y4)
    model.zero_grad()
    expected = micro_batch_backward(lambda xs, ys: model(xs, ys)[1], (x4, y4), model.parameters())
    assert loss.item() == expected.item()


@needs_fork
def test_a_worker_that_dies_makes_backward_raise_not_wait(threads):
    model, x, y, parts = started(threads)
    (pid,) = parts.pids
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)  # dead and reaped before the next batch: no timing involved
    with pytest.raises(RuntimeError, match="part 1 exited; the workers are closed"):
        parts.backward(x, y)
    with pytest.raises(RuntimeError, match=r"backward\(\) after close\(\)"):
        parts.backward(x, y)


@needs_fork
def test_close_ends_the_workers_and_backward_then_raises(threads):
    model, x, y, parts = started(threads, 3)
    pids = parts.pids
    assert len(pids) == 2 and all(alive(pid) for pid in pids)
    parts.close()
    assert not any(alive(pid) for pid in pids)  # killed and reaped: no zombie left
    assert parts.pids == []
    parts.close()  # twice is fine
    with pytest.raises(RuntimeError, match=r"backward\(\) after close\(\)"):
        parts.backward(x, y)


@needs_fork
def test_a_worker_exits_when_its_callers_end_of_the_pipe_closes(threads):
    model, x, y, parts = started(threads)
    (pid, connection), = parts._workers
    connection.close()  # what the caller's exit does to the pipe
    _, status = os.waitpid(pid, 0)  # returns: the worker ended by itself
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    parts._workers.clear()


@needs_fork
def test_a_parameter_whose_shape_changed_is_refused(threads):
    model, x, y, parts = started(threads)
    with parts:
        next(model.parameters()).data = np.zeros((1, 1), np.float32)
        with pytest.raises(RuntimeError, match="shape or dtype changed"):
            parts.backward(x, y)


@needs_fork
def test_forking_leaks_no_warning_and_ctrl_c_is_left_to_the_caller(threads):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model, x, y, parts = started(threads)
        with parts:
            (pid,) = parts.pids
            os.kill(pid, signal.SIGINT)  # ignored by the worker
            loss = parts.backward(x, y)  # answers after the signal: the worker is still there
            assert np.isfinite(loss.item()) and alive(pid)


@pytest.mark.parametrize("micro_batches", [0, 1.5, True])
def test_bad_micro_batches_raise(micro_batches):
    with pytest.raises(ValueError, match="micro_batches must be an int >= 1"):
        MicroBatchProcesses(lambda: None, [], micro_batches)


TEXT = load_corpus()[:20_000]
TINY = dict(block_size=16, n_layer=1, n_head=2, n_embd=16, batch_size=4, warmup_steps=2,
            eval_interval=10, eval_batches=2, checkpoint_interval=10, chunk_size=256, max_steps=4)


@needs_fork
def test_the_trainers_fit_uses_workers_and_ends_them(tmp_path, threads, monkeypatch):
    threads(2)
    made = []
    original = MicroBatchProcesses._start

    def start(self):
        original(self)
        made.append(self.pids)

    monkeypatch.setattr(MicroBatchProcesses, "_start", start)
    trainer = Trainer(TrainConfig(**TINY, micro_batches=2), TEXT, tmp_path / "run")
    trainer.fit(progress=False)
    assert len(made) == 1 and len(made[0]) == 1
    assert trainer.micro_batch_processes is None and not alive(made[0][0])


@needs_fork
def test_a_backward_interrupted_before_the_replies_gets_fresh_workers_next_time(threads):
    threads(2)
    x, y = batch(4)
    model = GPT(CONFIG, tl.Generator(0))
    parts = MicroBatchProcesses(lambda xs, ys: model(xs, ys)[1], model.parameters())
    talk = parts._talk

    def interrupted(part, exchange, *message):
        if not message:  # a receive: Ctrl-C arrives while the caller waits for the reply
            raise KeyboardInterrupt
        return talk(part, exchange, *message)

    parts._talk = interrupted
    with pytest.raises(KeyboardInterrupt):
        parts.backward(x, y)
    (first,) = parts.pids
    del parts._talk
    model.zero_grad()
    loss = parts.backward(x, y)  # the stale reply is never read: a new worker answers
    (second,) = parts.pids
    got = [p.grad.numpy().tobytes() for p in model.parameters()]
    parts.close()
    assert second != first and not alive(first)
    model.zero_grad()
    expected = micro_batch_backward(lambda xs, ys: model(xs, ys)[1], (x, y), model.parameters())
    assert loss.item() == expected.item()
    assert got == [p.grad.numpy().tobytes() for p in model.parameters()]


@needs_fork
def test_backward_in_a_fork_of_the_caller_raises(threads):
    model, x, y, parts = started(threads)
    with parts:
        pid = os.fork()
        if pid == 0:  # the fork: refused, and the caller's workers are left alone
            code = 3
            try:
                parts.backward(x, y)
            except RuntimeError as error:
                code = 0 if "not made in" in str(error) else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
        assert np.isfinite(parts.backward(x, y).item())


@needs_fork
def test_the_parameters_move_into_shared_memory_and_a_new_array_is_followed(threads):
    threads(2)
    x, y = batch(4)
    model = GPT(CONFIG, tl.Generator(0))
    first = next(model.parameters())
    before = first.numpy()
    parts = MicroBatchProcesses(lambda xs, ys: model(xs, ys)[1], model.parameters())
    parts.backward(x, y)
    assert first.numpy() is not before and np.array_equal(first.numpy(), before)
    shared = first.numpy()
    first.data = np.full_like(before, 0.01)  # a new array: copied back into the shared area
    model.zero_grad()
    loss = parts.backward(x, y)
    got = [p.grad.numpy().tobytes() for p in model.parameters()]
    parts.close()
    assert first.numpy() is shared and (shared == np.float32(0.01)).all()
    model.zero_grad()
    expected = micro_batch_backward(lambda xs, ys: model(xs, ys)[1], (x, y), model.parameters())
    assert loss.item() == expected.item()
    assert got == [p.grad.numpy().tobytes() for p in model.parameters()]


def test_parameters_that_share_memory_are_refused():
    whole = tl.nn.Parameter(tl.zeros(4, 3))
    part = tl.nn.Parameter(tl.zeros(1))
    part.data = whole.numpy()[0]  # a view into the other's array
    with pytest.raises(ValueError, match="two parameters share memory"):
        MicroBatchProcesses(lambda: None, [whole, part])
    MicroBatchProcesses(lambda: None, [whole, tl.nn.Parameter(tl.zeros(3))]).close()


@needs_fork
def test_a_run_in_worker_processes_interrupted_and_resumed_has_one_threads_bits(tmp_path, threads):
    config = TrainConfig(**{**TINY, "max_steps": 8}, micro_batches=2)
    threads(1)  # no worker: the parts one after the other
    straight = Trainer(config, TEXT, tmp_path / "straight")
    straight.fit(progress=False)
    threads(2)
    first = Trainer(config, TEXT, tmp_path / "cut")

    def stop_at_5(step, loss):
        if step == 5:
            first._request_stop()  # as the first Ctrl-C: the step is saved, fit raises

    with pytest.raises(KeyboardInterrupt):
        first.fit(progress=False, callback=stop_at_5)
    resumed = Trainer.resume(tmp_path / "cut", TEXT)
    assert resumed.step == 5
    resumed.fit(progress=False)  # fresh workers, forked from the resumed trainer
    assert [p.numpy().tobytes() for p in resumed.model.parameters()] == [
        p.numpy().tobytes() for p in straight.model.parameters()
    ]
