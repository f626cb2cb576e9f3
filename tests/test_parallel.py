"""tensorlib.engine.parallel and the kernels that use it (GELU, LayerNorm, packed attention, Adam).

Each kernel is run with the pool forced on (every call splits, 1 to 3 threads) and must give the
same bits as one thread, forward and backward.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.engine import parallel
from tensorlib.nn import functional as F
from tensorlib.nn.functional.attention import PackedCausalAttention


@pytest.fixture
def pool(monkeypatch):
    """Every parallel_for call splits, whatever its size; the thread count is restored
    afterwards."""
    monkeypatch.setattr(parallel, "_min_work", 1)
    monkeypatch.setattr(parallel, "_blas_spin_seconds", 0.0)  # nor do BLAS's threads hold it back
    previous = parallel.get_num_threads()
    yield parallel.set_num_threads
    parallel.set_num_threads(previous)


def _bits(arrays):
    return [np.ascontiguousarray(a).view(np.uint8).tobytes() for a in arrays]


def _run(fn, pool, threads):
    pool(threads)
    return _bits(fn())


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 1000, 4099])
def test_chunks_cover_the_range_once(pool, n):
    pool(3)
    hits = np.zeros(n, int)

    def mark(start, stop):
        assert start % 16 == 0 or start == 0
        hits[start:stop] += 1

    parallel.parallel_for(mark, n)
    assert (hits == 1).all()


def test_small_work_runs_in_the_caller_in_one_call():
    """Below the threshold (element-passes, n * cost) parallel_for makes one call, even with
    threads."""
    previous = parallel.get_num_threads()
    parallel.set_num_threads(2)
    try:
        calls = []
        parallel.parallel_for(lambda start, stop: calls.append((start, stop)), 1024, cost=8)
        assert calls == [(0, 1024)] and not parallel.worth_splitting(1024, 8)
        calls.clear()
        parallel.parallel_for(lambda start, stop: calls.append((start, stop)), 1 << 16, cost=64)
        assert (
            sorted(calls) == [(0, 1 << 15), (1 << 15, 1 << 16)]
            and parallel.worth_splitting(1 << 16, 64)
        )
        parallel.set_num_threads(1)
        assert not parallel.worth_splitting(1 << 16, 64)
    finally:
        parallel.set_num_threads(previous)


def test_an_error_in_a_chunk_is_raised_in_the_caller(pool):
    pool(2)

    def fail(start, stop):
        if start > 0:
            raise ValueError("chunk failed")

    with pytest.raises(ValueError, match="chunk failed"):
        parallel.parallel_for(fail, 1024)


def test_workers_use_the_callers_errstate(pool):
    pool(2)
    x = np.full(1024, 1e30, np.float32)
    x[:512] = 1  # only the second chunk, run by a worker thread, overflows
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        parallel.parallel_for(lambda start, stop: x[start:stop] * x[start:stop], x.size)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_set_num_threads_rejects_non_positive_ints(bad):
    with pytest.raises(ValueError, match="int >= 1"):
        parallel.set_num_threads(bad)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_starts_its_own_workers(pool):
    pool(2)
    x = np.ones(4096, np.float32)
    # the parent's workers exist
    parallel.parallel_for(lambda start, stop: np.tanh(x[start:stop]), x.size)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        parallel.parallel_for(lambda start, stop: np.tanh(x[start:stop]), x.size)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 0


def _gelu(x, g):
    t = tl.tensor(x, requires_grad=True)
    y = F.gelu(t, approximate="tanh")
    y.backward(tl.tensor(g))
    return y.numpy(), t.grad.numpy()


def _layer_norm(x, g):
    t = tl.tensor(x, requires_grad=True)
    ln = tl.nn.LayerNorm(x.shape[-1])
    ln = ln.double() if x.dtype == np.float64 else ln
    with tl.no_grad():
        ln.weight.copy_(tl.tensor(np.linspace(0.5, 1.5, x.shape[-1], dtype=x.dtype)))
        ln.bias.copy_(tl.tensor(np.linspace(-1, 1, x.shape[-1], dtype=x.dtype)))
    y = ln(t)
    y.backward(tl.tensor(g))
    return y.numpy(), t.grad.numpy(), ln.weight.grad.numpy(), ln.bias.grad.numpy()


def _attention(x, g):
    t = tl.tensor(x, requires_grad=True)
    y = PackedCausalAttention.apply(t, heads=2, scale=0.25)
    y.backward(tl.tensor(g[..., : x.shape[-1] // 3]))
    return y.numpy(), t.grad.numpy()


@pytest.mark.parametrize(
    "kernel, shape",
    [
        (_gelu, (37, 50)),
        (_gelu, (3, 65536 + 40)),  # several blocks of 2**16, the last one short
        (_layer_norm, (5, 37, 24)),
        (_layer_norm, (3, 1000, 96)),  # backward blocks of 672 rows: four whole, one of 312
        (_attention, (7, 13, 48)),
        (_attention, (40, 64, 48)),  # blocks of 16 sequences: two whole, one of 8
        (_attention, (3, 300, 12)),  # a sequence per block
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_give_the_same_bits_at_any_thread_count(pool, kernel, shape, dtype):
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    one = _run(lambda: kernel(x, g), pool, 1)
    for threads in (2, 3):
        assert _run(lambda: kernel(x, g), pool, threads) == one, (
            f"{kernel.__name__} at {threads} threads"
        )


def test_adamw_steps_give_the_same_bits_at_any_thread_count(pool):
    def train():
        gen = tl.Generator(0)
        model = tl.nn.Sequential(
            tl.nn.Linear(16, 40, generator=gen), tl.nn.ReLU(), tl.nn.Linear(40, 3, generator=gen)
        )
        opt = tl.optim.AdamW(model.parameters(), lr=1e-2, amsgrad=True)
        x = tl.tensor(np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32))
        for _ in range(3):
            opt.zero_grad()
            model(x).square().mean().backward()
            opt.step()
        return [p.detach().numpy() for p in model.parameters()]

    one = _run(train, pool, 1)
    assert _run(train, pool, 2) == one and _run(train, pool, 3) == one


def test_gelu_blocks_give_the_bits_of_one_pass_over_the_whole_array(pool):
    from tensorlib.nn.functional.activation import _gelu_tanh_backward, _gelu_tanh_forward

    x = np.random.default_rng(2).standard_normal(3 * 65536 + 1001).astype(np.float32) * 4
    g = np.random.default_rng(3).standard_normal(x.size).astype(np.float32)
    cdf, y, t, du = (np.empty_like(x) for _ in range(4))
    _gelu_tanh_forward(x, cdf, y)
    _gelu_tanh_backward(x, cdf, g, t, du)
    for threads in (1, 2):
        assert _run(lambda: _gelu(x, g), pool, threads) == _bits([y, du])


def test_attention_decides_the_shift_sequence_by_sequence_and_stays_right(pool):
    """Some sequences' scores exceed the unshifted softmax's limit, the others' do not, in
    separate blocks and within one: all match the float64 definition, at any thread count."""
    rng = np.random.default_rng(4)
    heads, length, width = 2, 64, 8  # 16 sequences per block
    qkv = rng.standard_normal((32, length, 3 * width)).astype(np.float32)
    qkv[16:, :, : 2 * width] *= 12  # Q and K of the second block: scores beyond 60
    qkv[5, :, : 2 * width] *= 12  # and of one sequence of the first
    outs = [
        _run(lambda: [PackedCausalAttention.apply(tl.tensor(qkv), heads=heads, scale=0.5)
                      .numpy()], pool, threads)
        for threads in (1, 2, 3)
    ]
    assert outs[0] == outs[1] == outs[2]
    out = PackedCausalAttention.apply(tl.tensor(qkv), heads=heads, scale=0.5).numpy()
    assert np.isfinite(out).all()
    x = qkv.astype(np.float64).reshape(32, length, 3, heads, width // heads)
    q, k, v = x.transpose(2, 0, 3, 1, 4)
    s = 0.5 * q @ np.swapaxes(k, -1, -2) + np.where(np.tri(length, dtype=bool), 0, -np.inf)
    finite = np.isfinite(s)
    assert np.abs(s[16:][finite[16:]]).max() > 60 > np.abs(s[:5][finite[:5]]).max()
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True) @ v).transpose(0, 2, 1, 3).reshape(32, length, width)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


# --- the other cores, busy with BLAS's spinning threads -------------------------------------


@pytest.fixture
def two_threads():
    previous = parallel.get_num_threads()
    parallel.set_num_threads(2)
    yield
    parallel.set_num_threads(previous)


def _calls(**options):
    calls = []
    parallel.parallel_for(lambda a, b: calls.append((a, b)), 1 << 16, cost=64, **options)
    return sorted(calls)


def test_no_split_within_the_spin_window_of_a_product_blas_may_have_threaded(two_threads):
    halves = [(0, 1 << 15), (1 << 15, 1 << 16)]
    assert _calls() == halves and not parallel.blas_may_be_spinning()
    parallel.note_product(64, 64, 64)  # M·N·K = 2**18: OpenBLAS runs it on one thread
    assert _calls() == halves
    parallel.note_product(64, 64, 65)
    assert parallel.blas_may_be_spinning() and not parallel.worth_splitting(1 << 16, 64)
    assert _calls() == [(0, 1 << 16)]  # one call in the caller: the other core is spinning
    assert _calls(ignore_blas_spin=True) == halves  # unless the caller says the split is worth it
    parallel._last_threaded_product -= parallel._blas_spin_seconds  # as if 0.1 s had passed
    assert not parallel.blas_may_be_spinning() and _calls() == halves


def test_products_are_not_recorded_at_one_thread_or_inside_a_split(two_threads, monkeypatch):
    parallel.set_num_threads(1)
    parallel.note_product(1024, 1024, 1024)
    assert not parallel.blas_may_be_spinning()
    parallel.set_num_threads(2)
    monkeypatch.setattr(parallel, "_min_work", 1)
    # a micro-batch's products: its BLAS library is held to one thread
    parallel.parallel_for(lambda a, b: parallel.note_product(1024, 1024, 1024), 2, align=1)
    assert not parallel.blas_may_be_spinning()


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_linear_records_its_products(two_threads, direction):
    x = tl.randn(256, 64, generator=tl.Generator(0), requires_grad=True)
    w = tl.randn(32, 64, generator=tl.Generator(1), requires_grad=True)
    y = F.linear(x, w)  # M·N·K = 256·32·64 = 2**19
    if direction == "backward":
        parallel._last_threaded_product = -math.inf
        y.sum().backward()
    assert parallel.blas_may_be_spinning()
    parallel._last_threaded_product = -math.inf
    F.linear(x[:64], w[:16])  # 2**16: below OpenBLAS's threshold
    assert not parallel.blas_may_be_spinning()
