"""Tests of tensorlib.random's normal, poisson, seed and the determinism flags (chapter 3).

The values never equal PyTorch's (tensorlib's generator is splitmix64, PyTorch's a Mersenne
Twister), so the parity tests compare shapes, dtypes, gradients and which inputs raise. The
statistical tests reject at a tail probability of about 1e-9 (6 standard errors).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl


@pytest.fixture(autouse=True)
def _restore_default_generator():
    """Tests here seed the default generator (tl.seed, tl.manual_seed): leave it as it was."""
    state = tl.get_rng_state()
    yield
    tl.set_rng_state(state)

# -- normal ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mean_shape", "std_shape", "expected"),
    [((3,), (3,), (3,)), ((2, 1), (3,), (2, 3)), ((), (4,), (4,)), ((2, 3), (), (2, 3)),
     ((0, 2), (2,), (0, 2))],
)
def test_normal_tensor_forms_broadcast(mean_shape, std_shape, expected):
    out = tl.normal(tl.zeros(*mean_shape), tl.ones(*std_shape))
    assert tuple(out.shape) == expected and out.dtype == tl.float32


def test_normal_dtypes_follow_the_tensor_parameter():
    assert tl.normal(tl.zeros(2, dtype=tl.float64), tl.ones(2)).dtype == tl.float64
    assert tl.normal(tl.zeros(2), tl.ones(2, dtype=tl.float64)).dtype == tl.float32
    assert tl.normal(0.0, tl.ones(2, dtype=tl.float16)).dtype == tl.float16
    assert tl.normal(tl.zeros(2, dtype=tl.float16)).dtype == tl.float16
    assert tl.normal(0.0, 1.0, (2,), dtype=tl.float64).dtype == tl.float64
    assert tl.normal(0.0, 1.0, [2, 3]).shape == (2, 3)


def test_normal_equals_mean_plus_std_times_randn_draws():
    mean, std = tl.tensor([[-1.0], [4.0]]), tl.tensor([0.5, 2.0, 3.0])
    out = tl.normal(mean, std, generator=tl.Generator(9)).numpy()
    z = tl.randn(2, 3, dtype=tl.float64, generator=tl.Generator(9)).numpy()
    expected = (mean.numpy().astype(np.float64) + std.numpy().astype(np.float64) * z)
    np.testing.assert_array_equal(out, expected.astype(np.float32))
    scalar = tl.normal(2.0, 3.0, (2, 3), generator=tl.Generator(9)).numpy()
    np.testing.assert_array_equal(scalar, (2.0 + 3.0 * z).astype(np.float32))
    # mean-only form: std 1
    only_mean = tl.normal(tl.zeros(2, 3), generator=tl.Generator(9)).numpy()
    np.testing.assert_array_equal(only_mean, z.astype(np.float32))


def test_normal_same_seed_same_bits_and_default_generator():
    tl.manual_seed(5)
    a = tl.normal(tl.zeros(100), tl.ones(100)).numpy()
    tl.manual_seed(5)
    b = tl.normal(tl.zeros(100), tl.ones(100)).numpy()
    c = tl.normal(tl.zeros(100), tl.ones(100)).numpy()
    assert np.array_equal(a, b) and not np.array_equal(b, c)


def test_normal_moments():
    n = 400_000
    mu, sigma = 1.5, 0.3
    x = tl.normal(tl.full((n,), mu, dtype=tl.float64), sigma, generator=tl.Generator(2)).numpy()
    assert abs(x.mean() - mu) < 6 * sigma / math.sqrt(n)
    assert abs(x.var() - sigma**2) < 6 * sigma**2 * math.sqrt(2 / n)
    y = tl.normal(0.0, tl.full((n,), 2.0, dtype=tl.float64), generator=tl.Generator(3)).numpy()
    assert abs(y.mean()) < 6 * 2 / math.sqrt(n) and abs(y.var() - 4) < 6 * 4 * math.sqrt(2 / n)
    # the moment test can fail: the wrong spread is rejected
    assert abs((x * 1.02).var() - sigma**2) >= 6 * sigma**2 * math.sqrt(2 / n)


def test_normal_zero_std_is_the_mean():
    out = tl.normal(tl.tensor([1.0, -2.0]), 0.0)
    assert out.tolist() == [1.0, -2.0]


def test_normal_gradient_is_recorded_and_zero():
    mean = tl.tensor([0.0, 1.0], requires_grad=True)
    std = tl.tensor([1.0, 2.0], requires_grad=True)
    out = tl.normal(mean, std)
    assert out.requires_grad and out.grad_fn is not None
    (out * 5).sum().backward()
    assert mean.grad.tolist() == [0.0, 0.0] and std.grad.tolist() == [0.0, 0.0]
    with tl.no_grad():
        assert not tl.normal(mean, 1.0).requires_grad
    assert not tl.normal(mean.detach(), 1.0).requires_grad
    leaf = tl.normal(0.0, 1.0, (3,), requires_grad=True)
    assert leaf.requires_grad and leaf.grad_fn is None


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: tl.normal(tl.zeros(3), -1.0), ValueError),
        (lambda: tl.normal(tl.zeros(3), math.nan), ValueError),
        (lambda: tl.normal(0.0, tl.tensor([1.0, -1.0])), ValueError),
        (lambda: tl.normal(tl.zeros(2), tl.tensor([1.0, math.nan])), ValueError),
        (lambda: tl.normal(0.0, -1.0, (2,)), ValueError),
        (lambda: tl.normal(tl.zeros(2), tl.ones(3)), ValueError),
        (lambda: tl.normal(tl.zeros(3, dtype=tl.int64), 1.0), TypeError),
        (lambda: tl.normal(0.0, tl.ones(3, dtype=tl.int64)), TypeError),
        (lambda: tl.normal(0.0, 1.0), TypeError),
        (lambda: tl.normal(0.0, 1.0, 3), TypeError),
        (lambda: tl.normal(tl.zeros(3), 1.0, (3,)), TypeError),
        (lambda: tl.normal(tl.zeros(3), 1.0, dtype=tl.float64), TypeError),
        (lambda: tl.normal("a", 1.0, (3,)), TypeError),
        (lambda: tl.normal(0.0, 1.0, (2,), dtype=tl.int64), TypeError),
        (lambda: tl.normal(0.0, 1.0, (2,), device="cuda"), (TypeError, ValueError, RuntimeError)),
        (lambda: tl.normal(tl.zeros(2), 1.0, generator=np.random.default_rng(0)), TypeError),
    ],
)
def test_normal_refuses_and_draws_nothing(call, error):
    before = tl.get_rng_state().tolist()
    with pytest.raises(error):
        call()
    assert tl.get_rng_state().tolist() == before


def test_normal_error_messages_name_what_came():
    with pytest.raises(ValueError, match="std >= 0, got -1.0"):
        tl.normal(tl.zeros(3), -1.0)
    with pytest.raises(TypeError, match="dtype of mean.*got int64"):
        tl.normal(tl.zeros(3, dtype=tl.int64), 1.0)
    with pytest.raises(TypeError, match="size as a tuple or list of ints, got 3"):
        tl.normal(0.0, 1.0, 3)


# -- poisson -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (0, 2)])
def test_poisson_shape_and_dtype_follow_the_rates(shape, dtype):
    out = tl.poisson(tl.full(shape, 3.0, dtype=getattr(tl, dtype)))
    assert tuple(out.shape) == shape and out.dtype == getattr(tl, dtype)


@pytest.mark.parametrize("rate", [0.0, 0.01, 1.0, 4.5, 9.99, 10.0, 37.0, 1000.0, 1e7])
def test_poisson_moments(rate):
    n = 100_000
    x = tl.poisson(tl.full((n,), rate, dtype=tl.float64), generator=tl.Generator(17)).numpy()
    assert np.array_equal(x, np.round(x)) and x.min() >= 0
    assert abs(x.mean() - rate) <= 6 * math.sqrt(rate / n)
    assert abs(x.var() - rate) <= 6 * math.sqrt((rate + 2 * rate**2) / n)


def pmf(k: int, rate: float) -> float:
    return math.exp(-rate + k * math.log(rate) - math.lgamma(k + 1))


@pytest.mark.parametrize("rate", [0.7, 6.0, 12.0, 150.0])
def test_poisson_frequencies_pass_chi_square(rate):
    n = 200_000
    x = tl.poisson(tl.full((n,), rate, dtype=tl.float64), generator=tl.Generator(8)).numpy()
    ks = [k for k in range(int(rate * 3 + 30)) if n * pmf(k, rate) >= 20]
    lo, hi = ks[0], ks[-1]
    probs = np.array([pmf(k, rate) for k in range(lo, hi + 1)])
    probs = np.concatenate([[sum(pmf(k, rate) for k in range(lo))], probs,
                            [1 - probs.sum() - sum(pmf(k, rate) for k in range(lo))]])
    observed = np.bincount(np.clip(x.astype(int), lo - 1, hi + 1) - (lo - 1), minlength=len(probs))
    keep = probs > 1e-12
    expected = n * probs[keep]
    stat = float(np.sum((observed[keep] - expected) ** 2 / expected))
    dof = int(keep.sum()) - 1
    limit = dof * (1 - 2 / (9 * dof) + 6 * math.sqrt(2 / (9 * dof))) ** 3
    assert stat < limit
    # the test can fail: the counts of a rate 3% off are rejected
    wrong = np.array([pmf(k, rate * 1.03) for k in range(lo, hi + 1)])
    wrong_expected = n * wrong
    wrong_stat = float(np.sum((observed[1:-1] - wrong_expected) ** 2 / wrong_expected))
    assert wrong_stat > limit


def test_poisson_same_seed_same_counts_mixed_rates():
    rates = tl.tensor([[0.5, 20.0, 0.0], [3.0, 1e5, 11.0]])
    a = tl.poisson(rates, generator=tl.Generator(1)).numpy()
    b = tl.poisson(rates, tl.Generator(1)).numpy()
    c = tl.poisson(rates, generator=tl.Generator(2)).numpy()
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a[0, 2] == 0.0


def test_poisson_small_rates_use_one_draw_each_in_order():
    # inversion by hand: the smallest k with u < F(k), u the 53-bit uniform of draw i
    rates = [0.2, 1.0, 2.5, 7.0, 9.5]
    g = tl.Generator(44)
    out = tl.poisson(tl.tensor(rates, dtype=tl.float64), generator=g).tolist()
    draws = tl.Generator(44).next_u64(len(rates))
    expected = []
    for x, rate in zip(draws, rates, strict=True):
        u = (int(x) >> 11) / 2**53
        k, term = 0, math.exp(-rate)
        cdf = term
        while u >= cdf:
            k += 1
            term *= rate / k
            cdf += term
        expected.append(float(k))
    assert out == expected
    follow = tl.Generator(44)
    follow.next_u64(5)
    assert g.get_state().tolist() == follow.get_state().tolist()


def test_poisson_gradient_is_recorded_and_zero():
    rates = tl.tensor([1.0, 30.0], requires_grad=True)
    out = tl.poisson(rates)
    assert out.requires_grad and out.grad_fn is not None
    out.sum().backward()
    assert rates.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: tl.poisson(tl.tensor([1.0, -2.0])), ValueError),
        (lambda: tl.poisson(tl.tensor([1.0, math.nan])), ValueError),
        (lambda: tl.poisson(tl.tensor([1.0, math.inf])), ValueError),
        (lambda: tl.poisson(tl.tensor([1, 2])), TypeError),
        (lambda: tl.poisson([1.0, 2.0]), TypeError),
        (lambda: tl.poisson(1.0), TypeError),
        (lambda: tl.poisson(tl.ones(2), generator=3), TypeError),
    ],
)
def test_poisson_refuses_and_draws_nothing(call, error):
    before = tl.get_rng_state().tolist()
    with pytest.raises(error):
        call()
    assert tl.get_rng_state().tolist() == before


# -- seed and the determinism flags ------------------------------------------------------------


def test_seed_reseeds_the_default_generator_and_returns_the_seed():
    chosen = tl.seed()
    assert isinstance(chosen, int) and 0 <= chosen < 2**64
    assert tl.initial_seed() == chosen
    first = tl.rand(4).tolist()
    tl.manual_seed(chosen)
    assert tl.rand(4).tolist() == first
    assert len({tl.seed() for _ in range(20)}) == 20  # 64 random bits: no repeats in practice
    g = tl.Generator(1)
    s = g.seed()
    assert g.initial_seed() == s
    assert g.uniform(3).tolist() == tl.Generator(s).uniform(3).tolist()


@pytest.fixture
def restore_flags():
    before = (tl.are_deterministic_algorithms_enabled(),
              tl.is_deterministic_algorithms_warn_only_enabled())
    yield
    tl.use_deterministic_algorithms(before[0], warn_only=before[1])


def test_deterministic_flags_are_recorded(restore_flags):
    tl.use_deterministic_algorithms(False)
    assert not tl.are_deterministic_algorithms_enabled()
    assert not tl.is_deterministic_algorithms_warn_only_enabled()
    tl.use_deterministic_algorithms(True)
    assert tl.are_deterministic_algorithms_enabled()
    assert not tl.is_deterministic_algorithms_warn_only_enabled()
    tl.use_deterministic_algorithms(True, warn_only=True)
    assert tl.is_deterministic_algorithms_warn_only_enabled()
    tl.use_deterministic_algorithms(mode=False, warn_only=True)
    assert not tl.are_deterministic_algorithms_enabled()
    assert tl.is_deterministic_algorithms_warn_only_enabled()


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {}), ((None,), {}), (("warn",), {}), ((np.bool_(True),), {}),
     ((True,), {"warn_only": 1}), ((True,), {"warn_only": None}), ((True, True), {}), ((), {})],
)
def test_deterministic_flags_refuse_non_bools(args, kwargs, restore_flags):
    before = (tl.are_deterministic_algorithms_enabled(),
              tl.is_deterministic_algorithms_warn_only_enabled())
    with pytest.raises(TypeError):
        tl.use_deterministic_algorithms(*args, **kwargs)
    assert (tl.are_deterministic_algorithms_enabled(),
            tl.is_deterministic_algorithms_warn_only_enabled()) == before


# -- parity with PyTorch -----------------------------------------------------------------------

NORMAL_CALLS = [
    ("t(3)", "1.0", None, {}),
    ("t(2,1)", "t(3)", None, {}),
    ("t(2)", "t(3)", None, {}),
    ("t(2,3)", "t(6)", None, {}),
    ("t64(3)", "t(3)", None, {}),
    ("t(3)", "t64(3)", None, {}),
    ("t16(3)", "t16(3)", None, {}),
    ("i(3)", "1.0", None, {}),
    ("0.0", "i(3)", None, {}),
    ("t(3)", "-1.0", None, {}),
    ("t(3)", "nan", None, {}),
    ("t(3)", "neg(3)", None, {}),
    ("0.0", "neg(3)", None, {}),
    ("0.0", "1.0", (2, 3), {}),
    ("0.0", "1.0", [2, 3], {}),
    ("0.0", "1.0", (2, 3), {"dtype": "float64"}),
    ("0.0", "1.0", (2, 3), {"dtype": "float16"}),
    ("0.0", "1.0", (2, 3), {"dtype": "int64"}),
    ("0.0", "1.0", (2,), {"requires_grad": True}),
    ("0.0", "-1.0", (2,), {}),
    ("0.0", "1.0", None, {}),
    ("0.0", "1.0", 3, {}),
    ("0.0", "1.0", (), {}),
    ("0.0", "t(3)", (3,), {}),
    ("t(3)", "1.0", (3,), {}),
    ("t(3)", "1.0", None, {"dtype": "float64"}),
    ("t()", "t(3)", None, {}),
    ("t(0)", "t(0)", None, {}),
    ("1", "2", (3,), {}),
    ("t(3)", "True", None, {}),
]


def _normal_outcome(lib, mean, std, size, kwargs):
    def value(spec):
        if not spec[0].isalpha() or spec in ("nan", "True"):
            return {"nan": math.nan, "True": True}.get(spec) if spec in ("nan", "True") else (
                float(spec) if "." in spec else int(spec))
        kind, dims = spec.split("(")
        shape = tuple(int(d) for d in dims.rstrip(")").split(",") if d)
        if kind == "neg":
            return lib.full(shape, -1.0)
        dtype = {"t": lib.float32, "t64": lib.float64, "t16": lib.float16, "i": lib.int64}[kind]
        return lib.ones(shape, dtype=dtype)

    options = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
    args = (value(mean), value(std)) if size is None else (value(mean), value(std), size)
    try:
        out = lib.normal(*args, **options)
    except Exception:
        return "raises"
    return tuple(out.shape), str(out.dtype).split(".")[-1], out.requires_grad


@pytest.mark.parity
@pytest.mark.parametrize(("mean", "std", "size", "kwargs"), NORMAL_CALLS)
def test_normal_shapes_dtypes_and_errors_match_torch(mean, std, size, kwargs):
    torch = pytest.importorskip("torch")
    assert _normal_outcome(tl, mean, std, size, kwargs) == _normal_outcome(
        torch, mean, std, size, kwargs
    )


@pytest.mark.parity
@pytest.mark.parametrize(
    "params", [("mean",), ("std",), ("mean", "std")]
)
def test_normal_gradient_matches_torch(params):
    torch = pytest.importorskip("torch")

    def run(lib):
        mean = lib.tensor([0.0, 1.0, 2.0], requires_grad="mean" in params)
        std = lib.tensor([1.0, 2.0, 3.0], requires_grad="std" in params)
        args = (mean if "mean" in params else 0.0, std if "std" in params else 1.0)
        out = lib.normal(*args)
        grad_fn = out.grad_fn is not None
        (out * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        grads = [p.grad.tolist() for p in (mean, std) if p.requires_grad]
        return out.requires_grad, grad_fn, grads

    assert run(tl) == run(torch)


@pytest.mark.parity
@pytest.mark.parametrize(
    ("rates", "dtype"),
    [([1.0, 2.0, 0.0], "float32"), ([[1.0], [50.0]], "float64"), ([3.0], "float16"),
     (5.0, "float32"), ([], "float32"), ([1, 2], "int64"), ([1.0, -2.0], "float32"),
     ([1.0, math.nan], "float32"), ([True], "bool")],
)
def test_poisson_shapes_dtypes_and_errors_match_torch(rates, dtype):
    torch = pytest.importorskip("torch")

    def run(lib):
        try:
            out = lib.poisson(lib.tensor(rates, dtype=getattr(lib, dtype)))
        except Exception:
            return "raises"
        return tuple(out.shape), str(out.dtype).split(".")[-1]

    assert run(tl) == run(torch)


@pytest.mark.parity
def test_poisson_gradient_and_arguments_match_torch():
    torch = pytest.importorskip("torch")

    def run(lib):
        rates = lib.tensor([1.0, 30.0], requires_grad=True)
        out = lib.poisson(rates)
        out.sum().backward()
        positional = lib.poisson(lib.ones(2), lib.Generator(3) if lib is tl else lib.Generator())
        keyword = lib.poisson(input=lib.ones(2))
        return out.requires_grad, rates.grad.tolist(), positional.shape, keyword.shape

    assert run(tl) == run(torch)
    with pytest.raises(TypeError):
        torch.poisson([1.0])
    with pytest.raises(TypeError):
        tl.poisson([1.0])


@pytest.mark.parity
def test_poisson_statistics_agree_with_torch():
    torch = pytest.importorskip("torch")
    n, rate = 100_000, 25.0
    torch.manual_seed(0)
    theirs = torch.poisson(torch.full((n,), rate, dtype=torch.float64)).numpy()
    ours = tl.poisson(tl.full((n,), rate, dtype=tl.float64), generator=tl.Generator(0)).numpy()
    # two independent samples of one law: their means differ by about sqrt(2 rate / n)
    assert abs(ours.mean() - theirs.mean()) < 6 * math.sqrt(2 * rate / n)
    assert abs(ours.var() - theirs.var()) < 6 * math.sqrt(2 * (rate + 2 * rate**2) / n)


@pytest.mark.parity
def test_seed_matches_torch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        chosen = lib.seed()
        assert isinstance(chosen, int) and 0 <= chosen < 2**64
        assert lib.initial_seed() == chosen
    torch.manual_seed(0)  # leave torch's generator seeded, as the other tests expect


@pytest.mark.parity
@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((True,), {}), ((False,), {}), ((True,), {"warn_only": True}), ((False,), {"warn_only": True}),
     ((), {"mode": True}), ((1,), {}), ((None,), {}), ((np.bool_(True),), {}),
     ((True,), {"warn_only": 1}), ((True, True), {}), ((), {})],
)
def test_deterministic_flags_match_torch(args, kwargs, restore_flags):
    torch = pytest.importorskip("torch")
    saved = (torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled())
    try:
        def run(lib):
            lib.use_deterministic_algorithms(False)
            try:
                lib.use_deterministic_algorithms(*args, **kwargs)
            except TypeError:
                return "TypeError"
            return (lib.are_deterministic_algorithms_enabled(),
                    lib.is_deterministic_algorithms_warn_only_enabled())

        assert run(tl) == run(torch)
    finally:
        torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])
