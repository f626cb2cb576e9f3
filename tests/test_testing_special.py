"""tensorlib.testing.assert_close (chapter 2, section 10.1), result_type/promote_types/can_cast
(section 11) and tensorlib.special (sections 16 and 16.1), against PyTorch's."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl

PAIRS = [  # (actual, expected) built by a library: close or not, by PyTorch's rules
    lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0 + 1e-7])),
    lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.001])),
    lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0], dtype=L.float64)),
    lambda L: (L.tensor([1.0, 2.0], dtype=L.float64), L.tensor([1.0, 2.0 + 1e-8], dtype=L.float64)),
    lambda L: (L.tensor([1.0, float("nan")]), L.tensor([1.0, float("nan")])),
    lambda L: (L.tensor([1, 2]), L.tensor([1, 3])),
    lambda L: (L.tensor([[1.0]]), L.tensor([1.0])),
    lambda L: (0.5, 0.5 + 1e-9),
    lambda L: (0.5, 0.51),
    lambda L: ([L.tensor([1.0]), 2.0], [L.tensor([1.0]), 2.0]),
    lambda L: ({"a": L.tensor([1.0])}, {"a": L.tensor([1.5])}),
    lambda L: ({"a": 1.0}, {"b": 1.0}),
    lambda L: ([1.0, 2.0], [1.0]),
]


def _outcome(lib, pair, **kwargs):
    actual, expected = pair(lib)
    try:
        lib.testing.assert_close(actual, expected, **kwargs)
    except AssertionError:
        return "not close"
    except (TypeError, ValueError) as error:
        return type(error).__name__
    return "close"


@pytest.mark.parity
@pytest.mark.parametrize("index", range(len(PAIRS)))
def test_assert_close_decides_as_pytorch(index):
    torch = pytest.importorskip("torch")
    assert _outcome(tl, PAIRS[index]) == _outcome(torch, PAIRS[index])
    options = {"rtol": 0.1, "atol": 0.0, "equal_nan": True, "check_dtype": False}
    assert _outcome(tl, PAIRS[index], **options) == _outcome(torch, PAIRS[index], **options)


def test_assert_close_messages_and_arguments():
    with pytest.raises(AssertionError, match=r"Mismatched elements: 1 / 3 \(33.3%\)"):
        tl.testing.assert_close(tl.tensor([1.0, 2.0, 3.0]), tl.tensor([1.0, 2.1, 3.0]))
    with pytest.raises(AssertionError, match="^custom$"):
        tl.testing.assert_close(tl.ones(1), tl.zeros(1), msg="custom")
    with pytest.raises(ValueError, match="rtol"):
        tl.testing.assert_close(tl.ones(1), tl.ones(1), atol=1.0)


@pytest.mark.parity
def test_promotion_queries_match_pytorch():
    torch = pytest.importorskip("torch")
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
    for first in names:
        for second in names:
            ours = tl.promote_types(getattr(tl, first), getattr(tl, second))
            theirs = torch.promote_types(getattr(torch, first), getattr(torch, second))
            assert str(ours) == str(theirs).removeprefix("torch."), (first, second)
            assert tl.can_cast(getattr(tl, first), getattr(tl, second)) == torch.can_cast(
                getattr(torch, first), getattr(torch, second)), (first, second)
    for lib_args in [lambda L: (L.tensor([1, 2]), 1.0), lambda L: (L.tensor([1.0]), 2),
                     lambda L: (L.tensor([True]), L.tensor(1, dtype=L.int8)),
                     lambda L: (L.tensor([1], dtype=L.int16), L.tensor(1.0, dtype=L.float64))]:
        ours, theirs = tl.result_type(*lib_args(tl)), torch.result_type(*lib_args(torch))
        assert str(ours) == str(theirs).removeprefix("torch.")


@pytest.mark.parity
@pytest.mark.parametrize("name", ["ndtr", "ndtri", "entr", "erf", "erfc", "erfinv", "expit",
                                  "logit", "sinc", "exp2", "expm1", "log1p"])
def test_special_functions_match_pytorch(name):
    torch = pytest.importorskip("torch")
    points = np.array([-0.5, 0.0, 0.1, 0.3, 0.5, 0.9, 1.5])
    if name in ("ndtri", "logit"):
        points = np.array([0.01, 0.1, 0.3, 0.5, 0.8, 0.99])
    if name == "erfinv":
        points = np.array([-0.9, -0.2, 0.0, 0.3, 0.95])
    results = []
    for lib in (tl, torch):
        x = lib.tensor(points, requires_grad=True)
        y = getattr(lib.special, name)(x)
        y.sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_xlog1py_and_entr_edges():
    assert tl.special.xlog1py(tl.tensor([0.0, 2.0]), tl.tensor([-1.0, math.e - 1])).tolist() == [
        0.0, 2.0]
    assert tl.special.entr(tl.tensor([-1.0, 0.0])).tolist() == [-math.inf, 0.0]
