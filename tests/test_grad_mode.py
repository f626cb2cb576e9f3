"""Grad mode (``no_grad``, ``enable_grad``, ``is_grad_enabled``) is per thread, as in PyTorch.

An evaluation thread inside ``no_grad`` does not switch gradients off for a training thread, a
new thread starts with gradients on, and two threads training two models get what each would
alone.
"""

from __future__ import annotations

import threading

import numpy as np

import tensorlib as tl


def test_grad_mode_is_thread_local():
    inside, started, release = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def evaluator():
        with tl.no_grad():
            inside.set()
            release.wait(5)
        seen["after"] = tl.is_grad_enabled()

    def trainer():
        inside.wait(5)
        seen["other thread"] = tl.is_grad_enabled()
        seen["requires_grad"] = (tl.ones(2, requires_grad=True) * 2).requires_grad
        started.set()

    threads = [threading.Thread(target=evaluator), threading.Thread(target=trainer)]
    for t in threads:
        t.start()
    started.wait(5)
    release.set()
    for t in threads:
        t.join(5)
    assert seen == {"other thread": True, "requires_grad": True, "after": True}
    assert tl.is_grad_enabled()


def test_a_new_thread_starts_with_grad_enabled():
    seen = []
    with tl.no_grad():
        worker = threading.Thread(target=lambda: seen.append(tl.is_grad_enabled()))
        worker.start()
        worker.join(5)
        assert not tl.is_grad_enabled()
    assert seen == [True]


def test_overlapping_no_grad_blocks_in_two_threads_restore_grad_mode():
    barrier = threading.Barrier(2)

    def work():
        for _ in range(200):
            with tl.no_grad():
                barrier.wait(5)
            barrier.wait(5)
        return tl.is_grad_enabled()

    results = []
    threads = [threading.Thread(target=lambda: results.append(work())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == [True, True]
    assert tl.is_grad_enabled()


def test_two_threads_train_two_models_as_if_alone():
    def train(seed):
        rng = np.random.default_rng(seed)
        w = tl.tensor(rng.normal(size=(3, 1)), requires_grad=True)
        x, y = tl.tensor(rng.normal(size=(8, 3))), tl.tensor(rng.normal(size=(8, 1)))
        for _ in range(100):
            loss = ((x @ w - y) * (x @ w - y)).mean()
            loss.backward()
            with tl.no_grad():
                w -= 0.1 * w.grad
                w.grad = None
        return w.numpy().copy()

    sequential = [train(0), train(1)]
    results = {}
    threads = [
        threading.Thread(target=lambda s=s: results.__setitem__(s, train(s))) for s in (0, 1)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert np.array_equal(results[0], sequential[0]) and np.array_equal(results[1], sequential[1])
