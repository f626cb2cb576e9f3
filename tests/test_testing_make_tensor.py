"""Chapter 2, section 22.6: ``testing.make_tensor`` and the deprecated ``testing.assert_allclose``,
against ``torch.testing``."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import tensorlib as tl


@pytest.mark.parity
def test_signatures_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("make_tensor", "assert_allclose"):
        ours = inspect.signature(getattr(tl.testing, name)).parameters
        theirs = inspect.signature(getattr(torch.testing, name)).parameters
        assert [(p.name, p.kind, p.default) for p in ours.values()] == [
            (p.name, p.kind, p.default) for p in theirs.values()
        ]


@pytest.mark.parity
@pytest.mark.parametrize(
    ("dtype", "low", "high", "lo", "hi"),
    [
        ("float32", None, None, -9.0, 9.0),
        ("float64", 2.5, 3.0, 2.5, 3.0),
        ("int64", None, None, -9, 9),
        ("uint8", None, None, 0, 9),
        ("uint8", -5, 300, 0, 255),
        ("int8", -1000, 1000, -128, 127),
        ("int32", 0.2, 3.5, 1, 3),
        ("bool", None, None, 0, 1),
    ],
)
def test_ranges_match_torch(dtype, low, high, lo, hi):
    torch = pytest.importorskip("torch")
    tl.manual_seed(0)
    torch.manual_seed(0)
    for lib in (tl, torch):
        out = lib.testing.make_tensor(5000, dtype=getattr(lib, dtype), device="cpu", low=low,
                                      high=high)
        values = out.numpy().astype(np.float64)
        assert str(out.dtype).split(".")[-1] == dtype and tuple(out.shape) == (5000,)
        assert lo <= values.min() and values.max() <= hi
        if dtype.startswith(("int", "uint", "bool")):
            assert values.min() == lo and values.max() == hi


@pytest.mark.parity
def test_shapes_flags_and_layouts_match_torch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        mk = lib.testing.make_tensor
        a = mk((2, 3), dtype=lib.float64, device="cpu", noncontiguous=True)
        assert tuple(a.shape) == (2, 3) and a.stride() == (6, 2) and not a.is_contiguous()
        assert mk(1, dtype=lib.float32, device="cpu", noncontiguous=True).is_contiguous()
        b = mk(2, 2, dtype=lib.float32, device="cpu", requires_grad=True)
        assert b.requires_grad and b.is_leaf
        c = mk(200, dtype=lib.int64, device="cpu", low=-1, high=2, exclude_zero=True)
        assert 0 not in c.tolist()
        d = mk(200, dtype=lib.float32, device="cpu", low=0, high=1e-40, exclude_zero=True)
        assert (d.numpy() > 0).all()
        assert tuple(mk((), dtype=lib.float32, device="cpu").shape) == ()


@pytest.mark.parity
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dtype": "int64", "low": 4, "high": 2}, "`low` must be less than `high`, but got 4 >= 2"),
        ({"dtype": "float32", "low": float("nan")}, "cannot be NaN"),
        ({"dtype": "uint8", "low": 300, "high": 400}, r"only supports \[0, 256\)"),
        ({"dtype": "int64", "requires_grad": True}, "not supported for boolean and integral"),
        ({"dtype": "float32", "noncontiguous": True, "memory_format": "x"}, "mutually exclusive"),
    ],
)
def test_errors_match_torch(kwargs, match):
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        given = dict(kwargs, dtype=getattr(lib, kwargs["dtype"]))
        if given.get("memory_format") == "x":
            given["memory_format"] = torch.contiguous_format if lib is torch else "contiguous"
        with pytest.raises(ValueError, match=match):
            lib.testing.make_tensor(3, device="cpu", **given)


def test_make_tensor_is_seeded():
    tl.manual_seed(7)
    first = tl.testing.make_tensor(4, dtype=tl.float32, device="cpu")
    tl.manual_seed(7)
    assert first.tolist() == tl.testing.make_tensor(4, dtype=tl.float32, device="cpu").tolist()


@pytest.mark.parity
def test_low_equal_high_warns_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        with pytest.warns(FutureWarning, match="Passing `low==high`"):
            out = lib.testing.make_tensor(3, dtype=lib.float32, device="cpu", low=2, high=2)
        assert out.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parity
@pytest.mark.parametrize(
    ("actual", "expected", "kwargs", "passes"),
    [
        ([1.0, 2.0], [1.00005, 2.0], {}, True),
        ([1.0, 2.0], [1.001, 2.0], {}, False),
        ([1.0, float("nan")], [1.0, float("nan")], {}, True),
        ([1.0, float("nan")], [1.0, float("nan")], {"equal_nan": False}, False),
        ([1, 2], [1, 3], {}, False),
        ([1.0, 2.0], [1.1, 2.0], {"rtol": 0.2, "atol": 0.0}, True),
    ],
)
def test_assert_allclose_matches_torch(actual, expected, kwargs, passes):
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                lib.testing.assert_allclose(lib.tensor(actual), expected, **kwargs)
                passed = True
            except AssertionError:
                passed = False
        assert passed is passes
        assert caught[0].category is FutureWarning
        assert "assert_allclose()` is deprecated since 1.12" in str(caught[0].message)
    with pytest.raises(AssertionError, match="custom"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tl.testing.assert_allclose(tl.tensor([1.0]), [2.0], msg="custom")
