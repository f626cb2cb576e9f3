"""tensorlib.gpt.data_parallel (chapter 8, section 12): micro-batches at once on the threads, and
what it rests on in chapter 2 (nested parallel_for runs inline, the in-place clock under a lock).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.engine import function, parallel
from tensorlib.gpt import GPT, GPTConfig
from tensorlib.gpt.data import load_corpus
from tensorlib.gpt.data_parallel import (
    blas_thread_control,
    blas_threads,
    gil_switch_interval,
    micro_batch_backward,
)
from tensorlib.gpt.train import TrainConfig, Trainer, _checked_config

CONFIG = GPTConfig(block_size=16, vocab_size=30, n_layer=2, n_head=2, n_embd=32)


def batch(n=6, seed=0):
    ids = tl.tensor(np.random.default_rng(seed).integers(0, CONFIG.vocab_size, (n, 17)))
    return ids[:, :-1], ids[:, 1:]


def gradients(model, x, y, micro_batches, **options):
    model.zero_grad()
    loss = micro_batch_backward(
        lambda xs, ys: model(xs, ys)[1], (x, y), model.parameters(), micro_batches, **options
    )
    return loss.item(), [p.grad.numpy().copy() for p in model.parameters()]


def bits(arrays):
    return [a.tobytes() for a in arrays]


@pytest.mark.parametrize("micro_batches", [2, 3, 4])
def test_the_same_bits_at_one_two_and_three_threads(threads, micro_batches):
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(7)
    runs = []
    for count in (1, 2, 3):
        threads(count)
        loss, grads = gradients(model, x, y, micro_batches)
        runs.append((loss, bits(grads)))
    assert runs[1] == runs[0] and runs[2] == runs[0]


@pytest.mark.parametrize("micro_batches", [1, 2, 3, 6])
def test_the_parts_give_the_whole_batchs_loss_and_gradient_in_float64(threads, micro_batches):
    threads(2)
    model, (x, y) = GPT(CONFIG, tl.Generator(0)).double(), batch(6)
    _, whole = model(x, y)
    model.zero_grad()
    whole.backward()
    expected = [p.grad.numpy().copy() for p in model.parameters()]
    loss, grads = gradients(model, x, y, micro_batches)
    assert loss == pytest.approx(whole.item(), rel=1e-13)
    for got, want in zip(grads, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)


def test_it_accumulates_into_grad_as_backward_does(threads):
    threads(2)
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(4)
    _, once = gradients(model, x, y, 2)
    micro_batch_backward(lambda xs, ys: model(xs, ys)[1], (x, y), model.parameters(), 2)
    for p, g in zip(model.parameters(), once, strict=True):
        np.testing.assert_array_equal(p.grad.numpy(), g + g)


def test_the_loss_is_a_detached_zero_dim_tensor_of_the_loss_dtype():
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(4)
    loss = micro_batch_backward(lambda xs, ys: model(xs, ys)[1], (x, y), model.parameters(), 2)
    assert loss.shape == () and loss.dtype == np.float32 and not loss.requires_grad


def test_parameters_that_need_no_grad_or_get_none_are_left_alone(threads):
    threads(2)
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(4)
    frozen = model.lm_head.weight if hasattr(model, "lm_head") else next(model.parameters())
    frozen.requires_grad_(False)
    unused = tl.nn.Parameter(tl.zeros(3))
    micro_batch_backward(
        lambda xs, ys: model(xs, ys)[1], (x, y), [*model.parameters(), unused], 2
    )
    assert frozen.grad is None and unused.grad is None


@pytest.mark.parametrize(
    "micro_batches, message",
    [(0, "micro_batches must be an int >= 1, got 0"), (True, "got True"), (2.0, "got 2.0"),
     (5, "5 micro-batches of a batch of 4")],
)
def test_bad_micro_batches_raise_and_change_nothing(micro_batches, message):
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(4)
    with pytest.raises(ValueError, match=message):
        micro_batch_backward(
            lambda xs, ys: model(xs, ys)[1], (x, y), model.parameters(), micro_batches
        )
    assert all(p.grad is None for p in model.parameters())


def test_inputs_of_different_batch_sizes_or_not_tensors_raise():
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(4)
    with pytest.raises(ValueError, match=r"batch sizes \(dimension 0\) differ: \[4, 3\]"):
        micro_batch_backward(lambda a, b: model(a, b)[1], (x, y[:3]), model.parameters())
    with pytest.raises(TypeError, match="inputs must be tensors"):
        micro_batch_backward(lambda a: a.sum(), (np.ones(4),), model.parameters())
    with pytest.raises(TypeError, match="inputs must be tensors"):
        micro_batch_backward(lambda: None, (), model.parameters())


@pytest.mark.parametrize("count", [1, 2])
def test_a_failing_part_raises_in_the_caller_and_leaves_grad_untouched(threads, count):
    threads(count)
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(4)
    calls = []

    def loss_fn(xs, ys):
        calls.append(len(xs))
        if len(calls) == 2:
            raise RuntimeError("part two failed")
        return model(xs, ys)[1]

    with pytest.raises(RuntimeError, match="part two failed"):
        micro_batch_backward(loss_fn, (x, y), model.parameters(), 2)
    assert all(p.grad is None for p in model.parameters())
    with pytest.raises(ValueError, match=r"one-element tensor, got \(2, 16, 30\)"):
        micro_batch_backward(lambda xs, ys: model(xs, ys)[0], (x, y), model.parameters(), 2)
    assert all(p.grad is None for p in model.parameters())


def test_parts_run_with_grad_mode_on_even_inside_no_grad(threads):
    threads(2)
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(4)
    with tl.no_grad():
        micro_batch_backward(lambda xs, ys: model(xs, ys)[1], (x, y), model.parameters(), 2)
        assert not tl.is_grad_enabled()
    assert all(p.grad is not None for p in model.parameters())


@pytest.mark.skipif(not blas_thread_control(), reason="no OpenBLAS or MKL found in the process")
def test_blas_threads_sets_and_restores_the_librarys_count():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def count():
        # the BLAS library's: an OpenMP runtime (torch's libgomp, when an earlier test in this
        # process imported torch) may come first in threadpool_info, with a count of its own
        info = threadpoolctl.threadpool_info()
        return max(i["num_threads"] for i in info if i["user_api"] == "blas")

    before = count()
    with blas_threads(1) as done:
        assert done and count() == 1
    assert count() == before
    with pytest.raises(KeyError), blas_threads(1):
        raise KeyError("restored on the way out too")
    assert count() == before


def _seen_in_two_parts(threads, look):
    """Run a two-part ``micro_batch_backward`` at two threads; ``look()`` inside each part's
    loss, in the order the parts record it."""
    if not blas_thread_control():
        pytest.skip("no OpenBLAS or MKL found in the process")
    threads(2)
    seen = []
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(4)

    def loss_fn(xs, ys):
        seen.append(look())
        return model(xs, ys)[1]

    micro_batch_backward(loss_fn, (x, y), model.parameters(), 2)
    return seen


def test_the_blas_library_stays_on_one_thread_inside_the_parts(threads):
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def look():
        # the BLAS libraries only: an OpenMP runtime (torch's libgomp, when an earlier test
        # imported torch) may come first, with a per-thread count of its own
        info = threadpoolctl.threadpool_info()
        blas = [i["num_threads"] for i in info if i["user_api"] == "blas"]
        return max(blas), parallel.in_parallel_region()

    assert _seen_in_two_parts(threads, look) == [(1, True), (1, True)]


def test_the_parts_run_with_a_short_switch_interval_which_is_restored(threads):
    before = sys.getswitchinterval()
    seen = _seen_in_two_parts(threads, sys.getswitchinterval)
    assert seen == [min(before, 5e-4)] * 2 and sys.getswitchinterval() == before


def test_the_parts_run_concurrently_even_right_after_a_threaded_product(threads):
    """A whole part per thread is worth the second core even while BLAS's threads may still
    spin after a product (an evaluation's forward, say): ``ignore_blas_spin``."""
    threads(2)
    parallel.note_product(1024, 1024, 1024)
    assert parallel.blas_may_be_spinning()
    assert _seen_in_two_parts(threads, parallel.in_parallel_region) == [True, True]


def test_gil_switch_interval_only_shortens_restores_and_checks_its_argument():
    before = sys.getswitchinterval()
    with gil_switch_interval(1e-3):
        assert sys.getswitchinterval() == pytest.approx(min(before, 1e-3))
        with gil_switch_interval(10.0):  # never longer than it was
            assert sys.getswitchinterval() == pytest.approx(min(before, 1e-3))
    assert sys.getswitchinterval() == before
    with pytest.raises(KeyError), gil_switch_interval(1e-4):
        raise KeyError("restored on the way out too")
    assert sys.getswitchinterval() == before
    for bad in (0, -1e-3, True, "1e-3", float("nan")):
        with pytest.raises(ValueError, match="gil_switch_interval"), gil_switch_interval(bad):
            pass
    assert sys.getswitchinterval() == before


def test_a_nested_parallel_for_runs_in_one_call(threads, monkeypatch):
    monkeypatch.setattr(parallel, "_min_work", 1)
    threads(2)
    inner: list[tuple[int, int, bool]] = []

    def outer(start, stop):
        assert parallel.in_parallel_region()
        parallel.parallel_for(lambda a, b: inner.append((a, b, start == 0)), 64)

    parallel.parallel_for(outer, 64)
    assert sorted(inner) == [(0, 64, False), (0, 64, True)]
    assert not parallel.in_parallel_region()


def test_the_in_place_clock_ticks_under_its_lock(monkeypatch):
    # CPython 3.11 switches threads only where no `+= 1` on a global can be cut in two, so a race
    # cannot be provoked here; Python 3.10 and free-threaded builds can cut it: the lock must hold
    held = []

    class Recording:
        def __enter__(self):
            held.append("enter")

        def __exit__(self, *exc):
            held.append("exit")

    monkeypatch.setattr(function, "_clock_lock", Recording())
    before = function._in_place_changes
    assert function.count_in_place_change() == before + 1
    assert held == ["enter", "exit"]


TEXT = load_corpus()[:20_000]
TINY = dict(block_size=16, n_layer=1, n_head=2, n_embd=16, batch_size=4, warmup_steps=2,
            eval_interval=10, eval_batches=2, checkpoint_interval=10, chunk_size=256, max_steps=6)


@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_the_trainer_with_micro_batches_gives_the_same_bits_at_one_and_two_threads(
    tmp_path, threads, dropout
):
    runs = []
    for count in (1, 2):
        threads(count)
        trainer = Trainer(TrainConfig(**TINY, micro_batches=2, dropout=dropout), TEXT,
                          tmp_path / str(count))
        losses = [trainer.train_step() for _ in range(4)]
        runs.append((losses, bits(p.numpy() for p in trainer.model.parameters())))
    assert runs[0] == runs[1]
    assert runs[0][0][-1] < runs[0][0][0]  # and it trains


def test_micro_batches_are_checked_and_old_checkpoints_resume_with_one():
    with pytest.raises(ValueError, match=r"micro_batches \(5\) must not exceed batch_size \(4\)"):
        TrainConfig(**TINY, micro_batches=5)
    with pytest.raises(ValueError, match="micro_batches must be an int >= 1, got 0"):
        TrainConfig(**TINY, micro_batches=0)
    stored = {k: v for k, v in TrainConfig(**TINY).__dict__.items() if k != "micro_batches"}
    assert _checked_config(stored, "old").micro_batches == 1


def test_a_parameter_listed_twice_gets_its_gradient_once(threads):
    threads(2)
    model, (x, y) = GPT(CONFIG, tl.Generator(0)), batch(4)
    _, once = gradients(model, x, y, 2)
    model.zero_grad()
    params = list(model.parameters())
    micro_batch_backward(lambda xs, ys: model(xs, ys)[1], (x, y), params + params[:3], 2)
    for p, g in zip(model.parameters(), once, strict=True):
        np.testing.assert_array_equal(p.grad.numpy(), g)


@pytest.mark.parametrize("bad", [0, -1, True, 1.0, "2"])
def test_blas_threads_refuses_what_is_not_a_thread_count(bad):
    with pytest.raises(ValueError, match=r"blas_threads: expected an int >= 1, got"):
        with blas_threads(bad):
            pass
