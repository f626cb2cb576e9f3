"""Chapter 2, section 22.6: ``put``/``put_`` (against PyTorch, with float64 gradchecks), and the
random fills ``random_`` and ``log_normal_`` and ``Tensor.multinomial`` (ranges, moments,
errors)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

BASE = np.arange(6, dtype=np.float64).reshape(2, 3) / 3.0


@pytest.mark.parity
@pytest.mark.parametrize(
    ("index", "source", "accumulate"),
    [
        ([0, -1, 4], [1.0, 2.0, 3.0], False),
        ([[1], [5]], [[-1.0, 0.5]], False),
        ([1, 1, 2], [1.0, 2.0, 4.0], True),
        ([-6], [9.0], True),
    ],
)
def test_put_values_and_gradients_match_torch(index, source, accumulate):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        x = lib.tensor(BASE, requires_grad=True)
        s = lib.tensor(source, dtype=lib.float64, requires_grad=True)
        y = lib.put(x, lib.tensor(index), s, accumulate=accumulate) if lib is torch else (
            x.put(lib.tensor(index), s, accumulate)
        )
        (y * lib.tensor(np.linspace(-1.0, 1.0, 6).reshape(2, 3))).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), s.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_gradcheck_float64(accumulate):
    x = tl.tensor(BASE, requires_grad=True)
    s = tl.tensor([1.0, -2.0], dtype=tl.float64, requires_grad=True)
    index = tl.tensor([4, 4] if accumulate else [4, 0])  # repeated: only added (PyTorch too)
    assert tl.autograd.gradcheck(lambda a, b: a.put(index, b, accumulate), (x, s))


@pytest.mark.parity
def test_put_in_place_matches_torch():
    torch = pytest.importorskip("torch")
    outs = []
    for lib in (tl, torch):
        x = lib.zeros(2, 3)
        assert x.put_(lib.tensor([1, 3]), lib.tensor([5.0, 6.0])) is x
        assert x._version == 1
        x.put_(lib.tensor([1]), lib.tensor([1.0]), accumulate=True)
        outs.append(x.tolist())
    assert outs[0] == outs[1]


def test_put_in_place_is_recorded_in_the_graph():
    x = tl.tensor(BASE, requires_grad=True)
    h = x * 2
    h.put_(tl.tensor([0]), tl.tensor([7.0], dtype=tl.float64))
    h.sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0, 2.0], [2.0, 2.0, 2.0]]


@pytest.mark.parity
@pytest.mark.parametrize(
    ("index", "source", "error", "match"),
    [
        ([10], [1.0], IndexError, "out of range: tried to access index 10 on a tensor of 6"),
        ([-7], [1.0], IndexError, "tried to access index -7"),
        ([1, 2], [1.0], IndexError, "same number of elements, but got source.numel"),
        ([1.0], [1.0], RuntimeError, "Expected a long tensor for index, but got Float"),
    ],
)
def test_put_errors_match_torch(index, source, error, match):
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        with pytest.raises(error, match=match):
            lib.zeros(2, 3).put_(lib.tensor(index), lib.tensor(source))


@pytest.mark.parity
@pytest.mark.parametrize(
    ("dtype", "args", "low", "high"),
    [
        ("int64", (3, 7), 3, 6),
        ("int64", (5,), 0, 4),
        ("float32", (-2, 3), -2, 2),
        ("uint8", (), 0, 255),
        ("bool", (), 0, 1),
        ("int8", (-128, 128), -128, 127),
    ],
)
def test_random_ranges_match_torch(dtype, args, low, high):
    torch = pytest.importorskip("torch")
    tl.manual_seed(0)
    torch.manual_seed(0)
    for lib in (tl, torch):
        draws = lib.zeros(4000, dtype=getattr(lib, dtype)).random_(*args)
        values = draws.to(lib.int64) if dtype == "bool" else draws
        assert str(draws.dtype).split(".")[-1] == dtype
        assert values.min().item() == low and values.max().item() == high


@pytest.mark.parity
def test_random_default_float_range_is_the_exact_integers():
    torch = pytest.importorskip("torch")
    tl.manual_seed(0)
    for lib, bound in ((tl, 2**24), (torch, 2**24)):
        draws = lib.zeros(2000).random_().numpy()
        assert draws.min() >= 0 and draws.max() <= bound and draws.max() > bound / 2
        assert np.all(draws == np.round(draws))
    assert tl.zeros(100, dtype=tl.float64).random_().max().item() > 2.0**40


@pytest.mark.parity
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m: m.zeros(3).random_(0), "expects 'from' to be less than 'to', but got from=0"),
        (lambda m: m.zeros(3).random_(5, 2), "but got from=5 >= to=2"),
        (lambda m: m.zeros(3, dtype=m.uint8).random_(0, 300), "out of bounds for"),
        (lambda m: m.zeros(3).log_normal_(1, 0), "log_normal_ expects std > 0.0, but found std=0"),
        (lambda m: m.zeros(3).log_normal_(1, -1), "found std=-1"),
    ],
)
def test_random_fill_errors_match_torch(call, match):
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match=match):
            call(lib)


def test_random_fills_are_seeded_and_counted_as_in_place_changes():
    tl.manual_seed(3)
    first = tl.zeros(5, dtype=tl.int64).random_(100)
    tl.manual_seed(3)
    again = tl.zeros(5, dtype=tl.int64).random_(100)
    assert first.tolist() == again.tolist() and first._version == 1
    generator = tl.Generator().manual_seed(1)
    assert tl.zeros(3).log_normal_(generator=generator)._version == 1
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        tl.zeros(3, requires_grad=True).random_()
    with pytest.raises(TypeError, match="floating-point"):
        tl.zeros(3, dtype=tl.int64).log_normal_()


@pytest.mark.parity
def test_log_normal_moments_match_torch():
    torch = pytest.importorskip("torch")
    tl.manual_seed(0)
    torch.manual_seed(0)
    for lib in (tl, torch):
        draws = lib.zeros(200000, dtype=lib.float64).log_normal_(0.5, 0.25)
        assert draws.min().item() > 0
        logs = draws.log()
        assert abs(logs.mean().item() - 0.5) < 0.005 and abs(logs.std().item() - 0.25) < 0.005
        assert abs(draws.mean().item() - np.exp(0.5 + 0.25**2 / 2)) < 0.01


def test_multinomial_method_is_chapter_3s():
    weights = tl.tensor([[0.0, 1.0, 0.0, 3.0], [2.0, 0.0, 0.0, 0.0]])
    tl.manual_seed(5)
    by_method = weights.multinomial(2, replacement=True)
    tl.manual_seed(5)
    assert by_method.tolist() == tl.multinomial(weights, 2, True).tolist()
    assert sorted(weights[0].multinomial(2).tolist()) == [1, 3]
    assert by_method[1].tolist() == [0, 0]
