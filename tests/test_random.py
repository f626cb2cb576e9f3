"""Tests of tensorlib.random: splitmix64 test vectors, state, creation functions, distributions.

The reference values are computed here with Python integers and ``math``, one draw at a time,
independently of the vectorised code under test. The statistical tests reject at a tail
probability of about 1e-9, so a correct generator fails them with negligible probability
(and, since every sample is seeded, never in practice), while a biased sampler fails by far.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.random import DEFAULT_SEED, Generator, resolve_generator

GAMMA = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1


def mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def output(seed: int, index: int) -> int:
    """Output number ``index`` (from 1) of splitmix64 seeded with ``seed``: mix(seed + i gamma)."""
    return mix64((seed + index * GAMMA) & MASK)


def scalar_outputs(seed: int, n: int) -> list[int]:
    state, out = seed, []
    for _ in range(n):
        state = (state + GAMMA) & MASK
        out.append(mix64(state))
    return out


def scalar_normal(x1: int, x2: int) -> float:
    u1 = ((x1 >> 40) + 1) / 16777217
    u2 = (x2 >> 40) / 2**24
    return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)


def chi_square_threshold(dof: int, z: float = 6.0) -> float:
    """Chi-square quantile with tail probability about 1e-9 (Wilson-Hilferty)."""
    return dof * (1 - 2 / (9 * dof) + z * math.sqrt(2 / (9 * dof))) ** 3


def chi_square(counts: np.ndarray, probs: np.ndarray) -> float:
    expected = counts.sum() * np.asarray(probs, dtype=np.float64)
    return float(np.sum((counts - expected) ** 2 / expected))


def normal_cdf(x: np.ndarray) -> np.ndarray:
    return np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in np.asarray(x, dtype=float)])


NORMAL_EDGES = np.linspace(-4, 4, 99)
NORMAL_PROBS = np.diff(np.concatenate([[0.0], normal_cdf(NORMAL_EDGES), [1.0]]))


def normal_chi_square(samples: np.ndarray) -> float:
    counts = np.bincount(np.searchsorted(NORMAL_EDGES, samples), minlength=100)
    return chi_square(counts, NORMAL_PROBS)


# -- test vectors ----------------------------------------------------------------------------


def test_published_splitmix64_vector_for_seed_zero():
    assert [int(x) for x in Generator(0).next_u64(3)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]


@pytest.mark.parametrize("seed", [0, 1, 42, 2024, DEFAULT_SEED, MASK])
def test_raw_outputs_match_the_scalar_definition(seed):
    assert [int(x) for x in Generator(seed).next_u64(300)] == scalar_outputs(seed, 300)


def test_a_draw_across_the_vectorisation_block_boundary_matches():
    block = 1 << 20
    out = Generator(99).next_u64(block + 3)
    for index in (1, block - 1, block, block + 1, block + 3):
        assert int(out[index - 1]) == output(99, index)


def test_draws_continue_across_calls():
    g = Generator(5)
    pieces = np.concatenate([g.next_u64(5), g.next_u64(0), g.next_u64(7)])
    assert [int(x) for x in pieces] == scalar_outputs(5, 12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform_is_the_top_24_bits_exactly(dtype):
    values = Generator(7).uniform(50, dtype=dtype)
    assert values.dtype == dtype
    expected = [(x >> 40) / 2**24 for x in scalar_outputs(7, 50)]
    assert values.astype(np.float64).tolist() == expected


def test_uniform_low_high():
    values = Generator(3).uniform((4, 5), -2.0, 3.0, dtype=np.float64)
    expected = [-2.0 + 5.0 * (x >> 40) / 2**24 for x in scalar_outputs(3, 20)]
    np.testing.assert_allclose(values.ravel(), expected, rtol=0, atol=1e-15)


def test_normal_uses_two_draws_per_value_and_the_cosine_branch():
    raw = scalar_outputs(11, 40)
    expected = [scalar_normal(raw[2 * i], raw[2 * i + 1]) for i in range(20)]
    got = Generator(11).normal(20, dtype=np.float64)
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)
    got32 = Generator(11).normal(20)
    assert got32.dtype == np.float32
    np.testing.assert_array_equal(got32, np.array(expected).astype(np.float32))


def test_normal_then_next_draw_position():
    g = Generator(8)
    g.normal((2, 3))
    assert int(g.next_u64(1)[0]) == output(8, 13)


def test_normal_mean_std_and_bound():
    g = Generator(1)
    z = g.normal(200_000, dtype=np.float64)
    assert np.abs(z).max() <= math.sqrt(2 * math.log(16777217))
    shifted = Generator(1).normal(200_000, mean=3.0, std=0.5, dtype=np.float64)
    np.testing.assert_allclose(shifted, 3.0 + 0.5 * z, rtol=1e-12)


def test_no_overflow_warning_leaks():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = Generator(MASK)
        g.next_u64(1000)
        g.uniform(1000)
        g.normal(1000)
        g.randint(-(2**63), 2**63, 1000)
        g.randperm(1000)
        tl.rand(10, generator=Generator(2**63))


# -- seeding and state -----------------------------------------------------------------------


def test_manual_seed_returns_the_generator_and_resets():
    g = Generator(1)
    first = g.next_u64(4)
    assert g.manual_seed(1) is g
    np.testing.assert_array_equal(g.next_u64(4), first)
    assert g.initial_seed() == 1


def test_negative_seeds_are_taken_modulo_2_64():
    assert Generator(-1).initial_seed() == MASK
    np.testing.assert_array_equal(Generator(-1).next_u64(3), Generator(MASK).next_u64(3))


def test_default_seed_is_fixed():
    assert Generator().initial_seed() == DEFAULT_SEED == 67280421310721


@pytest.mark.parametrize(
    ("seed", "error", "message"),
    [
        (True, TypeError, "seed must be an int"),
        (1.5, TypeError, "seed must be an int, got float"),
        ("3", TypeError, "seed must be an int"),
        (2**64, ValueError, r"seed must be in \[-2\*\*63, 2\*\*64\)"),
        (-(2**63) - 1, ValueError, "seed must be in"),
    ],
)
def test_bad_seeds(seed, error, message):
    with pytest.raises(error, match=message):
        Generator(seed)


def test_global_manual_seed_returns_the_default_generator():
    g = tl.manual_seed(123)
    assert g is tl.default_generator
    assert tl.initial_seed() == 123
    a = tl.randn(5)
    tl.manual_seed(123)
    np.testing.assert_array_equal(tl.randn(5).numpy(), a.numpy())


def test_state_round_trip_replays_the_continuation():
    g = Generator(77)
    g.normal(33)
    state = g.get_state()
    assert state.dtype == tl.uint8 and tuple(state.shape) == (16,)
    first = (g.uniform(5), g.normal(4), g.randint(0, 7, 9), g.randperm(10), g.bernoulli(0.3, 8))
    g.next_u64(100)
    g.set_state(state)
    second = (g.uniform(5), g.normal(4), g.randint(0, 7, 9), g.randperm(10), g.bernoulli(0.3, 8))
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


def test_state_is_little_endian_state_then_seed_and_restores_the_seed():
    g = Generator(5)
    g.next_u64(2)
    raw = g.get_state().numpy()
    assert int.from_bytes(raw[:8].tobytes(), "little") == (5 + 2 * GAMMA) & MASK
    assert int.from_bytes(raw[8:].tobytes(), "little") == 5
    other = Generator(9).set_state(raw)  # a plain numpy array is accepted too
    assert other.initial_seed() == 5
    assert int(other.next_u64(1)[0]) == output(5, 3)


def test_get_state_is_a_copy():
    g = Generator(1)
    state = g.get_state()
    g.next_u64(10)
    assert int.from_bytes(state.numpy()[:8].tobytes(), "little") == 1


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        (b"0123456789abcdef", TypeError, "uint8 tensor of shape \\(16,\\).*got bytes"),
        (np.zeros(16, dtype=np.int64), ValueError, "got dtype int64 and shape \\(16,\\)"),
        (np.zeros(15, dtype=np.uint8), ValueError, "got dtype uint8 and shape \\(15,\\)"),
        (np.zeros((2, 8), dtype=np.uint8), ValueError, "shape \\(2, 8\\)"),
    ],
)
def test_set_state_rejects_bad_input_and_changes_nothing(bad, error, message):
    g = Generator(3)
    before = g.get_state().numpy().copy()
    with pytest.raises(error, match=message):
        g.set_state(bad)
    np.testing.assert_array_equal(g.get_state().numpy(), before)


def test_global_rng_state_functions():
    tl.manual_seed(9)
    state = tl.get_rng_state()
    a = tl.rand(3).numpy()
    tl.set_rng_state(state)
    np.testing.assert_array_equal(tl.rand(3).numpy(), a)


# -- creation functions ----------------------------------------------------------------------


def test_same_seed_same_tensor_different_seed_different_tensor():
    for make in (tl.rand, tl.randn):
        a = make(3, 4, generator=Generator(1)).numpy()
        b = make(3, 4, generator=Generator(1)).numpy()
        c = make(3, 4, generator=Generator(2)).numpy()
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
    assert (
        tl.randperm(50, generator=Generator(1)).tolist()
        == tl.randperm(50, generator=Generator(1)).tolist()
    )
    assert (
        tl.randperm(50, generator=Generator(1)).tolist()
        != tl.randperm(50, generator=Generator(2)).tolist()
    )


def test_size_conventions_dtype_and_requires_grad():
    a = tl.rand(2, 3, generator=Generator(0))
    b = tl.rand((2, 3), generator=Generator(0))
    assert tuple(a.shape) == (2, 3) and a.dtype == tl.float32
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c = tl.randn([4], generator=Generator(0), dtype=tl.float64, requires_grad=True)
    assert c.dtype == tl.float64 and c.requires_grad and c.is_leaf
    assert tuple(tl.rand(generator=Generator(0)).shape) == ()
    assert tuple(tl.randn(0, 3).shape) == (0, 3)


def test_float32_and_float64_share_one_stream():
    a = tl.rand(10, generator=Generator(4), dtype=tl.float64).numpy()
    b = tl.rand(10, generator=Generator(4)).numpy()
    np.testing.assert_array_equal(a.astype(np.float32), b)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: tl.rand(2, dtype=tl.int64), TypeError, "expected a floating dtype"),
        (lambda: tl.rand(-1), ValueError, r"size \(-1,\) has a negative dimension"),
        (lambda: tl.rand(2.5), TypeError, "size must be a sequence of ints, got 2.5"),
        (
            lambda: tl.rand(2, generator=np.random.default_rng(0)),
            TypeError,
            "must be a tensorlib.Generator",
        ),
        (lambda: tl.randint(5, 5, (3,)), ValueError, "low < high"),
        (lambda: tl.randint(5), TypeError, r"\(high, size\) or \(low, high, size\)"),
        (
            lambda: tl.randint(0, 5, (3,), requires_grad=True),
            TypeError,
            "only floating-point tensors",
        ),
        (lambda: tl.randperm(-1), ValueError, "n >= 0"),
        (lambda: Generator(0).normal(3, std=-1.0), ValueError, "std must be >= 0"),
        (lambda: Generator(0).bernoulli(1.5, 3), ValueError, r"probabilities must be in \[0, 1\]"),
        (lambda: Generator(0).next_u64(-1), ValueError, "n must be >= 0"),
        (lambda: tl.bernoulli(np.array([0.5])), TypeError, "expects a Tensor of probabilities"),
    ],
)
def test_creation_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_randint_forms_bounds_and_dtype():
    a = tl.randint(10, (1000,), generator=Generator(1))
    b = tl.randint(0, 10, (1000,), generator=Generator(1))
    c = tl.randint(0, 10, size=(1000,), generator=Generator(1))
    assert a.dtype == tl.int64
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(a.numpy(), c.numpy())
    assert a.numpy().min() == 0 and a.numpy().max() == 9
    neg = tl.randint(-3, 2, (500,), generator=Generator(2)).numpy()
    assert set(neg.tolist()) == {-3, -2, -1, 0, 1}
    full = Generator(3).randint(-(2**63), 2**63, 1000)
    assert full.dtype == np.int64 and (full < 0).any() and (full > 0).any()
    assert tl.randint(0, 4, (3,), dtype=np.int32).dtype == np.int32


def test_randint_is_a_modulo_of_the_raw_draws_when_nothing_is_rejected():
    raw = scalar_outputs(6, 20)
    got = Generator(6).randint(0, 1000, 20)
    assert got.tolist() == [x % 1000 for x in raw]


def test_randint_rejects_the_draws_that_would_bias_a_large_range():
    # range 3 * 2**62: accepting every draw and taking x % r would put 1/2 of the mass, not
    # 1/3, in the first third. Rejection accepts x < 3 * 2**62 only (3/4 of the draws).
    r, low = 3 * 2**62, -(2**63)
    g = Generator(10)
    values = g.randint(low, low + r, 30_000).view(np.uint64) + np.uint64(2**63)  # minus low
    thirds = np.bincount((values // np.uint64(2**62)).astype(np.int64), minlength=3)
    assert chi_square(thirds, np.full(3, 1 / 3)) < chi_square_threshold(2)
    # the state advanced by exactly the draws consumed: a one-at-a-time loop agrees
    kept, index = [], 0
    while len(kept) < 40:
        index += 1
        x = output(10, index)
        if x < r:
            kept.append(x % r)
    replay = Generator(10).randint(low, low + r, 40).view(np.uint64) + np.uint64(2**63)
    assert replay.tolist() == kept
    check = Generator(10)
    check.randint(low, low + r, 40)
    assert int(check.next_u64(1)[0]) == output(10, index + 1)


def test_randint_equals_a_scalar_loop_when_half_the_draws_are_rejected():
    # width 2**63 + 1: 2**64 = 1 * width + (2**63 - 1), so only x < width is accepted (p ~ 1/2),
    # and 1000 values need about 2000 draws, often more than the first vectorised block holds
    low, high = -(2**62) - 1, 2**62
    width = high - low
    for seed in (99, 5, 2**64 - 1):
        kept, index = [], 0
        while len(kept) < 1000:
            index += 1
            x = output(seed, index)
            if x < width:
                kept.append(low + x % width)
        assert 800 < index - 1000 < 1200  # about half of the draws were rejected
        g = Generator(seed)
        assert g.randint(low, high, 1000).tolist() == kept
        assert int(g.next_u64(1)[0]) == output(seed, index + 1)  # the state is the loop's


def test_modulo_without_rejection_fails_the_same_statistic():
    r = 3 * 2**62
    raw = Generator(10).next_u64(30_000)
    biased = raw % np.uint64(r)
    thirds = np.bincount((biased // np.uint64(2**62)).astype(np.int64), minlength=3)
    assert chi_square(thirds, np.full(3, 1 / 3)) > chi_square_threshold(2)


def test_randperm_is_a_permutation_and_uniform():
    g = Generator(4)
    perm = g.randperm(1000)
    assert perm.dtype == np.int64 and sorted(perm.tolist()) == list(range(1000))
    codes = np.array([g.randperm(3) @ np.array([9, 3, 1]) for _ in range(6000)])
    counts = np.unique(codes, return_counts=True)[1]
    assert len(counts) == 6
    assert chi_square(counts, np.full(6, 1 / 6)) < chi_square_threshold(5)
    assert tl.randperm(0).numpy().shape == (0,)


def test_randperm_draws_again_when_keys_tie():
    class TiedFirst(Generator):
        calls = 0

        def next_u64(self, n):
            TiedFirst.calls += 1
            if TiedFirst.calls == 1:
                return np.zeros(n, dtype=np.uint64)
            return super().next_u64(n)

    perm = TiedFirst(0).randperm(5)
    assert TiedFirst.calls == 2
    keys = np.array(scalar_outputs(0, 5), dtype=np.uint64)
    assert perm.tolist() == np.argsort(keys).tolist()


def test_bernoulli():
    g = Generator(2)
    mask = g.bernoulli(0.3, (1000, 100))
    assert mask.dtype == np.float32 and set(np.unique(mask).tolist()) <= {0.0, 1.0}
    assert abs(mask.mean() - 0.3) < 6 * math.sqrt(0.3 * 0.7 / mask.size)
    probs = np.array([0.0, 1.0, 0.5])
    many = g.bernoulli(np.broadcast_to(probs, (20000, 3)))
    assert many[:, 0].sum() == 0 and many[:, 1].sum() == 20000
    assert abs(many[:, 2].mean() - 0.5) < 0.02
    expected = [float((x >> 40) / 2**24 < 0.25) for x in scalar_outputs(8, 10)]
    assert Generator(8).bernoulli(0.25, 10).tolist() == expected
    out = tl.bernoulli(tl.tensor([[0.0, 1.0]], dtype=tl.float64), generator=Generator(0))
    assert out.dtype == tl.float64 and out.tolist() == [[0.0, 1.0]]


def test_bernoulli_is_exact_at_the_24_bit_grid():
    # u = k * 2**-24 with k the top 24 bits of the draw, and u < p iff k < ceil(p * 2**24)
    k = np.array([x >> 40 for x in scalar_outputs(11, 50)], dtype=np.float64)
    at_k = Generator(11).bernoulli(k * 2.0**-24, dtype=np.float64)
    above_k = Generator(11).bernoulli((k + 1) * 2.0**-24, dtype=np.float64)
    assert at_k.sum() == 0 and above_k.sum() == 50


# -- distributions ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_samples():
    g = Generator(12345)
    return g.uniform(1_000_000, dtype=np.float64), g.normal(1_000_000, dtype=np.float64)


def test_uniform_moments_and_chi_square(big_samples):
    u, _ = big_samples
    n = u.size
    assert abs(u.mean() - 0.5) < 6 * math.sqrt(1 / 12 / n)
    assert abs(u.var() - 1 / 12) < 6 * math.sqrt(1 / 180 / n)
    assert u.min() >= 0 and u.max() <= 1 - 2**-24
    counts = np.bincount((u * 100).astype(int), minlength=100)
    assert chi_square(counts, np.full(100, 0.01)) < chi_square_threshold(99)


def test_normal_moments_chi_square_and_ks(big_samples):
    _, z = big_samples
    n = z.size
    assert abs(z.mean()) < 6 / math.sqrt(n)
    assert abs(z.var() - 1) < 6 * math.sqrt(2 / n)
    assert abs(np.mean(z**4) - 3) < 6 * math.sqrt(96 / n)
    assert normal_chi_square(z) < chi_square_threshold(99)
    sample = np.sort(z[:20_000])
    cdf = normal_cdf(sample)
    m = sample.size
    ks = max(np.max(np.arange(1, m + 1) / m - cdf), np.max(cdf - np.arange(m) / m))
    assert math.sqrt(m) * ks < 3.27


def test_pairs_of_consecutive_uniforms_are_independent(big_samples):
    u, _ = big_samples
    cells = (u[0::2] * 10).astype(int) * 10 + (u[1::2] * 10).astype(int)
    assert (
        chi_square(np.bincount(cells, minlength=100), np.full(100, 0.01))
        < chi_square_threshold(99)
    )


def test_biased_samplers_fail_the_statistics(big_samples):
    _, z = big_samples
    assert normal_chi_square(z * 1.02) > chi_square_threshold(99)
    assert normal_chi_square(z / math.sqrt(2)) > chi_square_threshold(99)
    # the Weyl sequence without the mixer: single values are uniform, pairs lie on a line
    weyl = (np.arange(1, 1_000_001, dtype=np.uint64) * np.uint64(GAMMA)) >> np.uint64(40)
    weyl = weyl.astype(float) / 2**24
    single = np.bincount((weyl * 100).astype(int), minlength=100)
    assert chi_square(single, np.full(100, 0.01)) < chi_square_threshold(99)
    cells = (weyl[0::2] * 10).astype(int) * 10 + (weyl[1::2] * 10).astype(int)
    assert (
        chi_square(np.bincount(cells, minlength=100), np.full(100, 0.01))
        > chi_square_threshold(99)
    )


@pytest.mark.parametrize("size", [2.5, "ab", (2, None), (True, 2)])
def test_generator_methods_reject_bad_sizes(size):
    with pytest.raises(TypeError, match="size must be"):
        Generator(0).uniform(size)


# -- round 2: torch's signatures, *_like, device, float16, shared helpers ----------------------


RANDINT_SPELLINGS = [
    ((10, (4,)), {}),
    ((0, 10, (4,)), {}),
    ((10,), {"size": (4,)}),
    ((0, 10), {"size": (4,)}),
    ((0,), {"high": 10, "size": (4,)}),
    ((), {"high": 10, "size": (4,)}),
    ((), {"low": 0, "high": 10, "size": (4,)}),
]


@pytest.mark.parametrize(("args", "kwargs"), RANDINT_SPELLINGS)
def test_randint_accepts_every_spelling_of_torch_signature(args, kwargs):
    expected = tl.randint(0, 10, (4,), generator=Generator(5)).tolist()
    assert tl.randint(*args, **kwargs, generator=Generator(5)).tolist() == expected


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((5,), {}, r"got the positional arguments \(5,\)$"),
        ((), {"high": 5}, "got no positional arguments and the keywords high$"),
        ((), {"low": 2, "size": (3,)}, "got no positional arguments and the keywords low, size"),
        ((1, 2, (3,), 4), {}, r"got the positional arguments \(1, 2, \(3,\), 4\)"),
        ((0, 5, (3,)), {"size": (3,)}, "got the positional arguments"),
    ],
)
def test_randint_rejects_incomplete_or_surplus_arguments(args, kwargs, message):
    with pytest.raises(
        TypeError, match=r"randint takes \(high, size\) or \(low, high, size\), " + message
    ):
        tl.randint(*args, **kwargs)


def test_rand_and_randn_take_size_as_a_keyword():
    for make in (tl.rand, tl.randn):
        a = make(size=(2, 3), generator=Generator(1))
        np.testing.assert_array_equal(a.numpy(), make(2, 3, generator=Generator(1)).numpy())
        with pytest.raises(
            TypeError, match=r"got a size both positionally \(2,\) and as size=\(3,\)"
        ):
            make(2, size=(3,))


@pytest.mark.parametrize("size", [(2, (3,)), ("ab",), (2.0, 3), (True,)])
def test_creation_sizes_are_checked_by_chapter_1s_as_shape(size):
    with pytest.raises(TypeError, match="size must be a sequence of ints"):
        tl.rand(*size)
    with pytest.raises(TypeError, match="size must be a sequence of ints"):
        tl.randint(0, 3, size[0] if len(size) == 1 else size)


CREATORS = {
    "rand": lambda **kw: tl.rand(2, 3, **kw),
    "randn": lambda **kw: tl.randn(2, 3, **kw),
    "randint": lambda **kw: tl.randint(0, 5, (2, 3), **kw),
    "randperm": lambda **kw: tl.randperm(6, **kw),
    "rand_like": lambda **kw: tl.rand_like(tl.zeros(2, 3), **kw),
    "randn_like": lambda **kw: tl.randn_like(tl.zeros(2, 3), **kw),
    "randint_like": lambda **kw: tl.randint_like(tl.zeros(2, 3), 5, **kw),
}


@pytest.mark.parametrize("name", CREATORS)
def test_every_creation_function_takes_device_cpu_only(name):
    make = CREATORS[name]
    for device in (None, "cpu", tl.device("cpu")):
        np.testing.assert_array_equal(make(device=device, generator=Generator(3)).numpy(),
                                      make(generator=Generator(3)).numpy())
    g = Generator(3)
    before = g.get_state().numpy().copy()
    with pytest.raises(ValueError, match="tensorlib runs on the CPU only, got device 'cuda'"):
        make(device="cuda", generator=g)
    np.testing.assert_array_equal(g.get_state().numpy(), before)  # nothing was drawn


@pytest.mark.parametrize("name", CREATORS)
def test_every_creation_function_takes_dtype_requires_grad_and_generator(name):
    make = CREATORS[name]
    out = make(dtype=tl.float64, requires_grad=True, generator=Generator(4))
    assert out.dtype == tl.float64 and out.requires_grad and out.is_leaf
    with pytest.raises(TypeError, match="must be a tensorlib.Generator"):
        make(generator=np.random.default_rng(0))


def test_like_functions_take_shape_and_dtype_of_the_input_and_draw_like_the_originals():
    x = tl.zeros(4, 5, dtype=tl.float64)
    for like, plain in ((tl.rand_like, tl.rand), (tl.randn_like, tl.randn)):
        out = like(x, generator=Generator(2))
        assert tuple(out.shape) == (4, 5) and out.dtype == tl.float64
        np.testing.assert_array_equal(
            out.numpy(), plain(4, 5, dtype=tl.float64, generator=Generator(2)).numpy()
        )
        assert like(x, dtype=tl.float32).dtype == tl.float32
    ints = tl.randint_like(tl.zeros(4, 5, dtype=tl.int32), 3, 9, generator=Generator(2))
    assert ints.dtype == tl.int32
    np.testing.assert_array_equal(
        ints.numpy(), tl.randint(3, 9, (4, 5), generator=Generator(2)).numpy()
    )
    floats = tl.randint_like(x, high=7, generator=Generator(2))
    assert floats.dtype == tl.float64 and set(np.unique(floats.numpy())) <= set(range(7))
    same = tl.randint_like(x, low=0, high=7, generator=Generator(2))
    np.testing.assert_array_equal(floats.numpy(), same.numpy())


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: tl.rand_like(np.zeros(3)),
            TypeError,
            "rand_like expects a Tensor as input, got ndarray",
        ),
        (lambda: tl.randn_like([1.0]), TypeError, "randn_like expects a Tensor"),
        (lambda: tl.randint_like(3, 5), TypeError, "randint_like expects a Tensor"),
        (
            lambda: tl.rand_like(tl.zeros(3, dtype=tl.int64)),
            TypeError,
            "expected a floating dtype.*got int64",
        ),
        (
            lambda: tl.randint_like(tl.zeros(3)),
            TypeError,
            r"randint_like takes \(input, high\) or \(input, low, high\), "
            r"got no positional arguments",
        ),
        (lambda: tl.randint_like(tl.zeros(3), low=2), TypeError, "and the keywords low"),
        (lambda: tl.randint_like(tl.zeros(3), 1, 2, 3), TypeError, "randint_like takes"),
        (
            lambda: tl.randint_like(tl.zeros(3, dtype=tl.int8), 1000),
            ValueError,
            "do not fit dtype int8",
        ),
    ],
)
def test_like_function_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda g: tl.randint(0, 1000, (3,), dtype=tl.int8, generator=g),
         r"randint: values in \[0, 1000\) do not fit dtype int8, whose range is \[-128, 127\]"),
        (lambda g: tl.randint(-1, 5, (3,), dtype=tl.uint8, generator=g), r"do not fit dtype uint8"),
        (lambda g: tl.randint(0, 3, (3,), dtype=tl.bool, generator=g), r"whose range is \[0, 1\]"),
        (lambda g: tl.randperm(129, dtype=tl.int8, generator=g), r"randperm: values in \[0, 129\)"),
    ],
)
def test_integer_dtypes_must_hold_the_whole_range_and_nothing_is_drawn(call, message):
    g = Generator(1)
    with pytest.raises(ValueError, match=message):
        call(g)
    assert int(g.next_u64(1)[0]) == output(1, 1)
    assert tl.randperm(128, dtype=tl.int8).numpy().max() == 127  # the edge fits
    assert tl.randint(-128, 128, (50,), dtype=tl.int8).dtype == tl.int8


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: tl.randint(0.5, 3, (2,)), "low must be an int, got float 0.5"),
        (lambda: tl.randint(0, "3", (2,)), "high must be an int, got str '3'"),
        (lambda: tl.randperm(2.5), "n must be an int, got float 2.5"),
        (lambda: tl.randperm(True), "n must be an int, got True"),
        (
            lambda: tl.randint(0, 3, (2,), dtype="no such dtype"),
            "randint: dtype must be a tensorlib dtype",
        ),
        (lambda: tl.rand(2, dtype="no such dtype"), "expected a floating dtype"),
    ],
)
def test_bad_bounds_and_dtypes_are_named(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_float16_uniforms_are_the_same_draws_rounded_down_and_never_one():
    u32 = tl.rand(1_000_000, generator=Generator(0)).numpy()
    u16 = tl.rand(1_000_000, dtype=tl.float16, generator=Generator(0)).numpy()
    assert u16.dtype == np.float16
    np.testing.assert_array_equal(u16, np.floor(u32.astype(np.float64) * 2**11) / 2**11)
    assert u16.max() == 1 - 2**-11 and u16.min() == 0
    assert (u32.astype(np.float16) == 1).sum() > 100  # what rounding to nearest would do
    expected = [(x >> 53) / 2**11 for x in scalar_outputs(7, 40)]
    assert Generator(7).uniform(40, dtype=np.float16).astype(np.float64).tolist() == expected


def test_float16_normals_and_bernoulli_are_the_float64_values_rounded():
    z64 = tl.randn(1000, dtype=tl.float64, generator=Generator(3)).numpy()
    z16 = tl.randn(1000, dtype=tl.float16, generator=Generator(3), requires_grad=True)
    assert z16.dtype == tl.float16 and z16.requires_grad
    np.testing.assert_array_equal(z16.detach().numpy(), z64.astype(np.float16))
    probs = tl.tensor(np.full(1000, 0.25, dtype=np.float16))
    mask = tl.bernoulli(probs, generator=Generator(4))
    assert mask.dtype == tl.float16
    np.testing.assert_array_equal(
        mask.numpy(), Generator(4).bernoulli(0.25, 1000, dtype=np.float64)
    )


def test_generator_takes_a_seed_not_a_device():
    with pytest.raises(
        TypeError,
        match=r"tensorlib.Generator takes a seed; torch.Generator's first "
        r"argument is a device - use tl.Generator\(seed\) or tl.manual_seed",
    ):
        Generator("cpu")
    with pytest.raises(TypeError, match="tensorlib.Generator takes a seed"):
        Generator(tl.device("cpu"))
    assert Generator(device="cpu").initial_seed() == DEFAULT_SEED
    assert Generator(1, device=tl.device("cpu")).device == tl.device("cpu")
    assert Generator(5, device="cpu").initial_seed() == 5
    assert Generator(seed=5).initial_seed() == 5
    with pytest.raises(ValueError, match="tensorlib runs on the CPU only, got device 'cuda'"):
        Generator(5, device="cuda")


def test_one_generator_resolution_for_random_and_init():
    assert resolve_generator(None) is tl.default_generator
    g = Generator(1)
    assert resolve_generator(g) is g
    with pytest.raises(TypeError, match="generator must be a tensorlib.Generator, got Generator"):
        resolve_generator(np.random.default_rng(0))
    assert tl.nn.init.resolve_generator is resolve_generator
    assert not hasattr(tl.nn.init, "_resolve") and not hasattr(tl.random, "_as_shape")


@pytest.mark.parity
@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    [
        *[("randint", args, kwargs) for args, kwargs in RANDINT_SPELLINGS],
        ("randint", (5,), {}),
        ("randint", (), {"high": 5}),
        ("randint", (), {"low": 2, "size": (3,)}),
        ("randint", (1, 2, (3,), 4), {}),
        ("rand", (), {"size": (2, 3)}),
        ("rand", ((2, 3),), {}),
        ("randn", (2, 3), {"dtype": "float16"}),
        ("randperm", (5,), {"dtype": "float32"}),
        ("rand_like", ("zeros64",), {}),
        ("randn_like", ("zeros64",), {"dtype": "float32"}),
        ("randint_like", ("zeros64", 5), {}),
        ("randint_like", ("zeros64", 2, 5), {}),
        ("randint_like", ("zeros64",), {"low": 2, "high": 5}),
        ("randint_like", ("zeros64",), {"high": 5}),
        ("randint_like", ("int32", 5), {}),
        ("randint_like", ("zeros64",), {"low": 2}),
    ],
)
def test_signatures_accept_and_reject_what_torch_does(name, args, kwargs):
    torch = pytest.importorskip("torch")

    def run(module, tensor_of):
        resolved_args = [tensor_of(a) if a in ("zeros64", "int32") else a for a in args]
        resolved_kwargs = {k: getattr(module, v) if k == "dtype" else v for k, v in kwargs.items()}
        try:
            out = getattr(module, name)(*resolved_args, **resolved_kwargs)
        except TypeError:
            return "TypeError"
        return tuple(out.shape), str(out.dtype).split(".")[-1]

    ours = run(tl, lambda a: tl.zeros(2, 3, dtype=tl.float64 if a == "zeros64" else tl.int32))
    theirs = run(
        torch, lambda a: torch.zeros(2, 3, dtype=torch.float64 if a == "zeros64" else torch.int32)
    )
    assert ours == theirs


# -- multinomial -------------------------------------------------------------------------------


def scalar_multinomial(seed: int, rows: list[list[float]], k: int) -> list[list[int]]:
    """With replacement, one sample at a time: u from the top 53 bits, the first i with u W <
    W_i."""
    draws = iter(scalar_outputs(seed, len(rows) * k))
    samples = []
    for row in rows:
        cumulative = list(np.cumsum(row))
        row_samples = []
        for _ in range(k):
            t = (next(draws) >> 11) / 2**53 * cumulative[-1]
            row_samples.append(next(i for i, c in enumerate(cumulative) if t < c))
        samples.append(row_samples)
    return samples


def race_key_order(seed: int, rows: list[list[float]], k: int) -> list[list[int]]:
    """Without replacement, by the definition of the race: sort E / w, E = -ln(1 - u)."""
    draws = iter(scalar_outputs(seed, len(rows) * len(rows[0])))
    samples = []
    for row in rows:
        exponentials = [-math.log1p(-(next(draws) >> 11) / 2**53) for _ in row]  # one per category
        keys = [e / w if w > 0 else math.inf for e, w in zip(exponentials, row, strict=True)]
        samples.append(sorted(range(len(row)), key=lambda i: keys[i])[:k])
    return samples


def test_multinomial_with_replacement_is_the_inverse_cdf_draw_for_draw():
    rows = [[1.0, 2.0, 3.0, 0.0, 4.0], [0.0, 0.5, 0.0, 0.25, 0.25], [1e-300, 0.0, 1.0, 0.0, 0.0]]
    out = tl.multinomial(
        tl.tensor(rows, dtype=tl.float64), 40, replacement=True, generator=Generator(9)
    )
    assert out.dtype == tl.int64 and out.shape == (3, 40)
    assert out.tolist() == scalar_multinomial(9, rows, 40)
    one_row = tl.multinomial(tl.tensor(rows[0]), 40, True, generator=Generator(9))
    assert one_row.shape == (40,) and one_row.tolist() == scalar_multinomial(9, rows[:1], 40)[0]


def test_multinomial_without_replacement_sorts_exponential_keys():
    rows = [[1.0, 2.0, 3.0, 0.0, 4.0], [0.5, 0.5, 0.25, 0.25, 1.0]]
    out = tl.multinomial(tl.tensor(rows, dtype=tl.float64), 4, generator=Generator(5))
    assert out.tolist() == race_key_order(5, rows, 4)
    everything = tl.multinomial(tl.tensor([3.0, 0.0, 1.0, 2.0]), 3, generator=Generator(1)).tolist()
    assert sorted(everything) == [0, 2, 3]


def test_multinomial_frequencies_with_replacement():
    weights = np.array([1.0, 2.0, 3.0, 0.0, 4.0, 0.5])
    samples = tl.multinomial(tl.tensor(weights), 300_000, True, generator=Generator(10)).numpy()
    counts = np.bincount(samples, minlength=weights.size)
    positive = weights > 0
    assert counts[~positive].sum() == 0
    assert chi_square(counts[positive], weights[positive] / weights.sum()) < chi_square_threshold(4)


def test_multinomial_ordered_pairs_without_replacement_follow_sequential_renormalisation():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    pairs = tl.multinomial(tl.tensor(np.tile(p, (60_000, 1))), 2, generator=Generator(11)).numpy()
    assert np.all(pairs[:, 0] != pairs[:, 1])
    counts = np.bincount(pairs[:, 0] * 4 + pairs[:, 1], minlength=16)
    distinct = ~np.eye(4, dtype=bool).ravel()
    sequential = (p[:, None] * p[None, :] / (1 - p[:, None])).ravel()[distinct]
    conditioned = (p[:, None] * p[None, :]).ravel()[distinct] / (1 - np.sum(p**2))
    assert chi_square(counts[distinct], sequential) < chi_square_threshold(11)
    # the test has power
    assert chi_square(counts[distinct], conditioned) > chi_square_threshold(11)


def _unxorshift(z: int, shift: int) -> int:
    x = z
    for _ in range(64 // shift + 1):
        x = z ^ (x >> shift)
    return x


def mix64_inverse(y: int) -> int:
    """The z with mix64(z) == y: undo each xor-shift and multiply (the multipliers are odd)."""
    z = _unxorshift(y, 31)
    z = (z * pow(0x94D049BB133111EB, -1, 1 << 64)) & MASK
    z = _unxorshift(z, 27)
    z = (z * pow(0xBF58476D1CE4E5B9, -1, 1 << 64)) & MASK
    return _unxorshift(z, 30)


def seed_whose_first_output_is(x: int) -> int:
    seed = (mix64_inverse(x) - GAMMA) & MASK
    assert output(seed, 1) == x
    return seed


def test_multinomial_resolves_probabilities_far_below_2_to_the_minus_24():
    # category 0 has probability about 2**-40: its interval is [0, 2**-40 W). A draw x whose
    # top 24 bits are 0 gives a 24-bit uniform of 0, inside it, whatever its other bits; the
    # 53-bit uniform tells x = 5 (u = 0, category 0) from x = 2**30 (u = 2**-34, category 1).
    weights = tl.tensor([2.0**-40, 1.0], dtype=tl.float64)
    small, larger = seed_whose_first_output_is(5), seed_whose_first_output_is(1 << 30)
    assert tl.multinomial(weights, 1, True, generator=Generator(small)).tolist() == [0]
    assert tl.multinomial(weights, 1, True, generator=Generator(larger)).tolist() == [1]


def test_multinomial_is_deterministic_and_consumes_a_fixed_number_of_draws():
    batch = tl.tensor(
        [[1.0, 2.0, 3.0, 4.0, 5.0], [5.0, 0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0]]
    )
    for replacement, used in [(True, 3 * 4), (False, 3 * 5)]:
        g = Generator(7)
        first = tl.multinomial(batch, 2 if not replacement else 4, replacement, generator=g)
        replay = Generator(7)
        replay.next_u64(used)
        assert g.get_state().tolist() == replay.get_state().tolist()
        again = tl.multinomial(
            batch, 2 if not replacement else 4, replacement, generator=Generator(7)
        )
        assert first.tolist() == again.tolist()
    tl.manual_seed(3)
    a = tl.multinomial(batch, 2)
    tl.manual_seed(3)
    assert tl.multinomial(batch, 2).tolist() == a.tolist()
    assert tl.multinomial(batch, 50, True, generator=Generator(8)).tolist() != tl.multinomial(
        batch, 50, True, generator=Generator(9)).tolist()


@pytest.mark.parametrize("dtype", [tl.float16, tl.float32, tl.float64])
def test_multinomial_takes_every_float_dtype_and_requires_grad_inputs(dtype):
    weights = tl.tensor([[0.2, 0.3, 0.5]], dtype=dtype, requires_grad=True)
    out = tl.multinomial(weights, 3, generator=Generator(0))
    assert out.dtype == tl.int64 and out.shape == (1, 3) and not out.requires_grad
    assert sorted(out.tolist()[0]) == [0, 1, 2]
    empty = tl.multinomial(tl.ones(0, 3, dtype=dtype), 2, generator=Generator(0))
    assert empty.shape == (0, 2) and empty.dtype == tl.int64


MULTINOMIAL_ERRORS = [
    (lambda: tl.multinomial([0.5, 0.5], 1), TypeError, "expects a Tensor of weights, got list"),
    (
        lambda: tl.multinomial(tl.tensor([1, 2]), 1),
        TypeError,
        "floating-point weights, got dtype int64",
    ),
    (lambda: tl.multinomial(tl.tensor([1.0]), 1.0), TypeError, "num_samples must be an int"),
    (
        lambda: tl.multinomial(tl.tensor(1.0), 1),
        ValueError,
        r"shape \(C,\) or \(m, C\), got shape \(\)",
    ),
    (lambda: tl.multinomial(tl.ones(2, 2, 2), 1), ValueError, r"got shape \(2, 2, 2\)"),
    (lambda: tl.multinomial(tl.ones(3), 0), ValueError, "num_samples must be >= 1, got 0"),
    (lambda: tl.multinomial(tl.ones(3), -1, True), ValueError, "num_samples must be >= 1, got -1"),
    (
        lambda: tl.multinomial(tl.ones(3), 4),
        ValueError,
        "cannot draw 4 samples without replacement from 3 categories",
    ),
    (lambda: tl.multinomial(tl.ones(0), 1, True), ValueError, "row 0 sums to 0"),
    (
        lambda: tl.multinomial(tl.tensor([1.0, -1.0]), 1, True),
        ValueError,
        "finite and >= 0, got -1 at row 0, category 1",
    ),
    (
        lambda: tl.multinomial(tl.tensor([1.0, math.inf]), 1),
        ValueError,
        "got inf at row 0, category 1",
    ),
    (
        lambda: tl.multinomial(tl.tensor([[1.0, 1.0], [math.nan, 1.0]]), 1),
        ValueError,
        "got nan at row 1, category 0",
    ),
    (
        lambda: tl.multinomial(tl.tensor([[1.0, 1.0], [0.0, 0.0]]), 1, True),
        ValueError,
        "row 1 sums to 0",
    ),
    (
        lambda: tl.multinomial(tl.tensor([1e308, 1e308], dtype=tl.float64), 1, True),
        ValueError,
        "row 0 sum to more than float64 can hold",
    ),
    (
        lambda: tl.multinomial(tl.tensor([[1.0, 1.0], [1.0, 0.0]]), 2),
        ValueError,
        "from row 1: only 1 of its weights are positive",
    ),
    (
        lambda: tl.multinomial(tl.ones(3), 1, generator=np.random.default_rng(0)),
        TypeError,
        "generator must be a tensorlib.Generator",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), MULTINOMIAL_ERRORS)
def test_multinomial_errors_name_what_came_and_draw_nothing(call, error, message):
    before = tl.get_rng_state().tolist()
    with pytest.raises(error, match=message):
        call()
    assert tl.get_rng_state().tolist() == before


@pytest.mark.parity
@pytest.mark.parametrize(
    ("shape", "num_samples", "replacement"),
    [((5,), 3, False), ((5,), 7, True), ((4, 6), 6, False), ((4, 6), 1, True), ((0, 3), 2, False),
     ((3,), 1, False), ((2, 1), 5, True)],
)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_multinomial_shapes_and_dtypes_match_torch(shape, num_samples, replacement, dtype):
    torch = pytest.importorskip("torch")
    ours = tl.multinomial(tl.ones(*shape, dtype=getattr(tl, dtype)), num_samples, replacement)
    theirs = torch.multinomial(
        torch.ones(*shape, dtype=getattr(torch, dtype)), num_samples, replacement
    )
    assert (tuple(ours.shape), str(ours.dtype)) == (
        tuple(theirs.shape),
        str(theirs.dtype).split(".")[-1],
    )


@pytest.mark.parity
@pytest.mark.parametrize(
    ("weights", "num_samples", "replacement"),
    [
        ([1.0, -1.0], 1, True),
        ([1.0, math.inf], 1, True),
        ([math.nan, 1.0], 1, False),
        ([0.0, 0.0], 1, True),
        ([1.0, 1.0], 3, False),
        ([1.0, 1.0], 0, True),
        ([[[1.0]]], 1, True),
        (1.0, 1, True),
    ],
)
def test_multinomial_refuses_what_torch_refuses(weights, num_samples, replacement):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.tensor(weights), num_samples, replacement)
    with pytest.raises(ValueError):
        tl.multinomial(tl.tensor(weights), num_samples, replacement)
