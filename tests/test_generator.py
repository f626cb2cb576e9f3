"""``tensorlib.Generator`` shared by threads: every draw is atomic, and a generator copies and
pickles.

Two threads drawing from one generator (the default one or their own) never get the same block
of numbers, and together they draw exactly the blocks one thread would have, in some order.
"""

from __future__ import annotations

import copy
import pickle
import threading

import numpy as np
import pytest

import tensorlib as tl


def _draw_blocks(generator: tl.Generator, threads: int, blocks: int, size: int) -> list[bytes]:
    results: list[list[bytes]] = [[] for _ in range(threads)]
    start = threading.Barrier(threads)

    def work(slot: list[bytes]) -> None:
        start.wait()
        for _ in range(blocks):
            slot.append(tl.rand(size, generator=generator).numpy().tobytes())

    workers = [threading.Thread(target=work, args=(results[k],)) for k in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return [block for slot in results for block in slot]


@pytest.mark.parametrize(
    "use_default", [True, False], ids=["default generator", "shared Generator"]
)
def test_two_threads_never_draw_the_same_block(use_default):
    threads, blocks, size = 2, 200, 20000
    if use_default:
        tl.manual_seed(123)
        generator = tl.default_generator
    else:
        generator = tl.Generator(123)
    drawn = _draw_blocks(generator, threads, blocks, size)
    assert len(set(drawn)) == len(drawn), (
        f"{len(drawn) - len(set(drawn))} duplicated blocks of {len(drawn)}"
    )
    # every block is one of the blocks a single thread would have drawn, in some interleaving
    sequential = tl.Generator(123)
    expected = {
        tl.rand(size, generator=sequential).numpy().tobytes() for _ in range(threads * blocks)
    }
    assert set(drawn) == expected
    assert generator.get_state().numpy().tobytes() == sequential.get_state().numpy().tobytes()


def test_threads_drawing_integers_with_rejection_stay_atomic():
    # randint with a bound that is not a power of two rejects and redraws
    generator = tl.Generator(7)
    results: list[list[bytes]] = [[], []]
    start = threading.Barrier(2)

    def work(slot: list[bytes]) -> None:
        start.wait()
        for _ in range(100):
            slot.append(tl.randint(0, 3, (5000,), generator=generator).numpy().tobytes())

    workers = [threading.Thread(target=work, args=(slot,)) for slot in results]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    drawn = results[0] + results[1]
    sequential = tl.Generator(7)
    expected = [
        tl.randint(0, 3, (5000,), generator=sequential).numpy().tobytes() for _ in range(200)
    ]
    assert sorted(drawn) == sorted(expected)


def test_a_generator_can_be_copied_and_pickled_with_its_lock():
    generator = tl.Generator(5)
    for clone in (copy.deepcopy(generator), pickle.loads(pickle.dumps(generator))):
        assert clone.initial_seed() == 5
        assert np.array_equal(clone.uniform(4), tl.Generator(5).uniform(4))
    dropout = tl.nn.Dropout(0.5, generator=tl.Generator(3))
    assert copy.deepcopy(dropout).generator.initial_seed() == 3
