"""Tests of tensorlib.shape (chapter 1): strides, views, broadcasting, sum-to-shape, axes, matmul.

Property tests compare each rule with numpy over random shapes, including 0-d tensors,
size-1 and empty dimensions; parity tests compare with PyTorch.
"""

from __future__ import annotations

import itertools
import re

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.shape import (
    as_shape,
    broadcast_shapes,
    contiguous_strides,
    is_contiguous,
    matmul_shape,
    normalize_axes,
    normalize_axis,
    sum_to_shape,
)

MODERATE = settings(max_examples=150, deadline=None)
DTYPES = [np.bool_, np.int8, np.int16, np.float16, np.float32, np.float64, np.complex128]

# Shapes with up to 4 dims of sizes 0..4 (so 0-d, size-1 and empty dimensions all occur).
shapes = st.lists(st.integers(0, 4), max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), max_size=4).map(tuple)


def numpy_outcome(function, *args):
    """numpy's result, or the string "raises" when numpy raises ValueError."""
    try:
        return function(*args)
    except ValueError:
        return "raises"


def our_outcome(function, *args):
    try:
        return function(*args)
    except ValueError:
        return "raises"


# ---------------------------------------------------------------- strides and views


@MODERATE
@given(shape=nonempty_shapes, dtype=st.sampled_from(DTYPES))
def test_contiguous_strides_equal_numpys(shape, dtype):
    array = np.zeros(shape, dtype)
    assert contiguous_strides(shape, array.itemsize) == array.strides
    assert contiguous_strides(shape) == tuple(s // array.itemsize for s in array.strides)


def test_contiguous_strides_formula_and_edge_cases():
    assert contiguous_strides(()) == ()
    assert contiguous_strides((5,)) == (1,)
    assert contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert contiguous_strides((2, 3, 4), itemsize=4) == (48, 16, 4)
    assert contiguous_strides((2, 0, 3)) == (3, 3, 1)  # a size-0 dim counts as 1, as in PyTorch
    assert contiguous_strides([np.int64(2), 3]) == (3, 1)


@pytest.mark.parametrize(
    "shape, itemsize, error, message",
    [
        ((2, -1), 1, ValueError, r"shape \(2, -1\) has a negative dimension"),
        ((2, 3), 0, ValueError, "itemsize must be >= 1, got 0"),
        ((2.0, 3), 1, TypeError, r"shape must be a sequence of ints, got \(2.0, 3\)"),
        ((True, 3), 1, TypeError, "shape must be a sequence of ints"),
        ("ab", 1, TypeError, "shape must be a sequence of ints"),
    ],
)
def test_contiguous_strides_rejects_bad_input(shape, itemsize, error, message):
    with pytest.raises(error, match=message):
        contiguous_strides(shape, itemsize)


@MODERATE
@given(shape=nonempty_shapes, data=st.data())
def test_address_formula_reads_every_element(shape, data):
    """storage[o + sum_k i_k s_k] is element i, for permuted and step-sliced views."""
    base = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    order = data.draw(st.permutations(range(len(shape))))
    steps = [data.draw(st.sampled_from([1, 2, -1, -2])) for _ in shape]
    view = base.transpose(order)[(*(slice(None, None, step) for step in steps), ...)]
    strides = [s // view.itemsize for s in view.strides]
    offset = (
        view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    ) // view.itemsize
    storage = base.reshape(-1)
    for index in itertools.islice(np.ndindex(*view.shape), 50):
        assert (
            storage[offset + sum(i * s for i, s in zip(index, strides, strict=True))] == view[index]
        )


@MODERATE
@given(shape=nonempty_shapes.filter(lambda s: len(s) >= 1), data=st.data())
def test_views_share_memory_and_copies_do_not(shape, data):
    base = np.zeros(shape, np.float32)
    order = data.draw(st.permutations(range(len(shape))))
    transposed = base.transpose(order)
    assert transposed.strides == tuple(base.strides[k] for k in order)  # permuted strides
    assert np.shares_memory(transposed, base)
    step = data.draw(st.integers(1, 3))
    sliced = base[::step]
    assert sliced.strides[0] == step * base.strides[0]  # multiplied stride
    assert np.shares_memory(sliced, base)
    target = (data.draw(st.integers(1, 3)),) + shape
    broadcast = np.broadcast_to(base, target)
    assert broadcast.strides[0] == 0 and np.shares_memory(broadcast, base)
    copied = transposed.copy()
    assert not np.shares_memory(copied, base)
    assert copied.strides == contiguous_strides(copied.shape, copied.itemsize)


@MODERATE
@given(shape=shapes, data=st.data())
def test_is_contiguous_agrees_with_numpys_flag(shape, data):
    base = np.zeros(shape, np.float64)
    order = data.draw(st.permutations(range(len(shape))))
    index = tuple(
        slice(data.draw(st.integers(0, 1)), None, data.draw(st.sampled_from([1, 2, -1])))
        for _ in shape
    ) + (...,)  # the Ellipsis keeps a 0-d result an array
    view = base.transpose(order)[index]
    assert is_contiguous(view.shape, view.strides, view.itemsize) == view.flags.c_contiguous
    elements = [s // 8 for s in view.strides]
    assert is_contiguous(view.shape, elements) == view.flags.c_contiguous


def test_is_contiguous_cases_and_errors():
    assert is_contiguous((2, 3), (3, 1))
    assert not is_contiguous((2, 3), (1, 2))
    assert is_contiguous((2, 1, 3), (3, 99, 1))  # a size-1 dim's stride is free
    assert is_contiguous((2, 0, 3), (5, 7, 9))  # empty: nothing to lay out
    assert is_contiguous((), ())
    assert not is_contiguous((3,), (-1,))
    with pytest.raises(ValueError, match=r"shape \(2, 3\) has 2 dims but strides \(1,\) has 1"):
        is_contiguous((2, 3), (1,))


# ---------------------------------------------------------------- broadcasting

# Half of the pairs come from hypothesis' broadcastable generator, so both outcomes are common.
shape_lists = st.one_of(
    st.lists(shapes, min_size=0, max_size=4),
    hnp.mutually_broadcastable_shapes(
        num_shapes=3, min_dims=0, max_dims=4, min_side=0, max_side=4
    ).map(lambda result: list(result.input_shapes)),
)


@settings(max_examples=200, deadline=None)
@given(shape_list=shape_lists)
def test_broadcast_shapes_agrees_with_numpy(shape_list):
    assert our_outcome(broadcast_shapes, *shape_list) == numpy_outcome(
        np.broadcast_shapes, *shape_list
    )


def test_broadcast_shapes_exhaustively_on_small_pairs():
    small = [s for d in range(3) for s in itertools.product(range(3), repeat=d)]
    for x, y in itertools.product(small, repeat=2):
        assert our_outcome(broadcast_shapes, x, y) == numpy_outcome(np.broadcast_shapes, x, y), (
            x,
            y,
        )


def test_broadcast_shapes_examples():
    assert broadcast_shapes() == ()
    assert broadcast_shapes((2, 3)) == (2, 3)
    assert broadcast_shapes((8, 1, 3), (4, 1)) == (8, 4, 3)
    assert broadcast_shapes((3, 1), (1, 0)) == (3, 0)  # a 1 stretches to 0
    assert broadcast_shapes(3, (2, 1)) == (2, 3)  # an int is a 1-d shape
    assert tl.broadcast_shapes is broadcast_shapes


@pytest.mark.parametrize(
    "shape_list, message",
    [
        (
            [(2, 3), (4,)],
            "shapes (2, 3) and (4,) cannot be broadcast: dimension -1 is 3 in (2, 3) but 4 in (4,)",
        ),
        (
            [(2, 3), (1,), (4,)],
            "shapes (2, 3), (1,) and (4,) cannot be broadcast: dimension -1 is "
            "3 in (2, 3) but 4 in (4,)",
        ),
        (
            [(5, 1, 3), (2, 1, 1)],
            "shapes (5, 1, 3) and (2, 1, 1) cannot be broadcast: dimension -3 "
            "is 5 in (5, 1, 3) but 2 in (2, 1, 1)",
        ),
        (
            [(0,), (3,)],
            "shapes (0,) and (3,) cannot be broadcast: dimension -1 is 0 in (0,) but 3 in (3,)",
        ),
    ],
)
def test_broadcast_shapes_error_names_shapes_dimension_and_sizes(shape_list, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        broadcast_shapes(*shape_list)


def test_broadcast_shapes_rejects_negative_sizes():
    with pytest.raises(ValueError, match=r"negative dimension"):
        broadcast_shapes((2, -3), (3,))


# ---------------------------------------------------------------- sum_to_shape


def sum_to_shape_by_definition(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """(S g)_j = sum of g_i over the positions i that broadcasting reads from element j."""
    out = np.zeros(shape, dtype=g.dtype)
    pad = g.ndim - len(shape)
    for i in np.ndindex(*g.shape):
        out[tuple(0 if n == 1 else i_k for i_k, n in zip(i[pad:], shape, strict=True))] += g[i]
    return out


@st.composite
def broadcast_pairs(draw):
    """(small shape, big shape) where the small shape broadcasts to the big one."""
    big = draw(shapes)
    kept = draw(st.integers(0, len(big)))  # drop the leading dims, then set some sizes to 1
    small = tuple(1 if draw(st.booleans()) else n for n in big[len(big) - kept :])
    return small, big


@MODERATE
@given(pair=broadcast_pairs(), seed=st.integers(0, 2**32 - 1))
def test_sum_to_shape_gives_the_right_sums(pair, seed):
    small, big = pair
    g = np.random.default_rng(seed).integers(-5, 6, size=big).astype(np.float64)  # exact sums
    result = sum_to_shape(g, small)
    assert result.shape == small
    np.testing.assert_array_equal(result, sum_to_shape_by_definition(g, small))


@MODERATE
@given(pair=broadcast_pairs(), seed=st.integers(0, 2**32 - 1))
def test_sum_to_shape_is_the_adjoint_of_broadcasting(pair, seed):
    small, big = pair
    rng = np.random.default_rng(seed)
    x, g = rng.standard_normal(small), rng.standard_normal(big)
    left = np.sum(np.broadcast_to(x, big) * g)
    right = np.sum(x * sum_to_shape(g, small))
    assert np.isclose(left, right, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_to_shape_keeps_float_dtype_and_returns_same_array(dtype):
    g = np.ones((2, 3, 4), dtype)
    assert sum_to_shape(g, (3, 1)).dtype == dtype
    np.testing.assert_array_equal(sum_to_shape(g, (3, 1)), np.full((3, 1), 8, dtype))
    assert sum_to_shape(g, (2, 3, 4)) is g
    assert sum_to_shape(g, ()).shape == () and float(sum_to_shape(g, ())) == 24.0
    assert sum_to_shape(np.ones((2, 0)), (2, 1)).tolist() == [[0.0], [0.0]]  # empty sums are 0


@pytest.mark.parametrize(
    "array_shape, shape, message",
    [
        (
            (2, 3),
            (4,),
            "cannot sum an array of shape (2, 3) to shape (4,): (4,) does not broadcast to (2, 3)",
        ),
        ((2, 3), (1, 2, 3), "cannot sum an array of shape (2, 3) to shape (1, 2, 3)"),
        ((2, 1), (2, 3), "cannot sum an array of shape (2, 1) to shape (2, 3)"),
        ((3,), (0,), "cannot sum an array of shape (3,) to shape (0,)"),
    ],
)
def test_sum_to_shape_rejects_shapes_that_do_not_broadcast(array_shape, shape, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        sum_to_shape(np.ones(array_shape), shape)


# ---------------------------------------------------------------- axes


@MODERATE
@given(ndim=st.integers(0, 5), axis=st.integers(-7, 7))
def test_normalize_axis_range_and_message(ndim, axis):
    span = max(ndim, 1)
    if -span <= axis < span:
        result = normalize_axis(axis, ndim)
        assert 0 <= result < span and (result - axis) % span == 0
    else:
        message = (
            f"Dimension out of range (expected to be in range of [{-span}, {span - 1}], but "
            f"got {axis})"
        )
        with pytest.raises(IndexError, match=re.escape(message)):
            normalize_axis(axis, ndim)


def test_normalize_axis_type_errors():
    with pytest.raises(TypeError, match="axis must be an int, got float 1.0"):
        normalize_axis(1.0, 2)
    with pytest.raises(TypeError, match="axis must be an int, got True"):
        normalize_axis(True, 2)
    with pytest.raises(ValueError, match="ndim must be >= 0, got -1"):
        normalize_axis(0, -1)
    assert normalize_axis(np.int64(-1), 3) == 2


@MODERATE
@given(ndim=st.integers(1, 5), data=st.data())
def test_normalize_axes_agrees_with_numpy(ndim, data):
    from numpy.lib.array_utils import normalize_axis_tuple

    axes = data.draw(st.lists(st.integers(-ndim, ndim - 1), max_size=ndim + 1))
    try:
        expected = tuple(sorted(normalize_axis_tuple(axes, ndim)))
    except ValueError:
        with pytest.raises(ValueError, match="appears more than once"):
            normalize_axes(axes, ndim)
    else:
        assert normalize_axes(axes, ndim) == expected
        assert normalize_axes(tuple(axes), ndim) == expected


def test_normalize_axes_cases():
    assert normalize_axes(None, 3) == (0, 1, 2)
    assert normalize_axes(None, 0) == ()
    assert normalize_axes(-1, 3) == (2,)
    assert normalize_axes((2, 0), 3) == (0, 2)
    assert normalize_axes((), 3) == ()
    assert normalize_axes(0, 0) == () and normalize_axes(-1, 0) == ()  # a 0-d tensor, like torch
    x = np.arange(6.0).reshape(2, 3)
    assert x.sum(axis=normalize_axes(-1, x.ndim)).tolist() == [3.0, 12.0]


def test_normalize_axes_errors():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "axis 1 appears more than once in (1, -1) (as 1 and -1) for a tensor with 2 dims"
        ),
    ):
        normalize_axes((1, -1), 2)
    with pytest.raises(ValueError, match="appears more than once"):
        normalize_axes((0, -1), 0)
    with pytest.raises(
        IndexError, match=re.escape("expected to be in range of [-2, 1], but got 2")
    ):
        normalize_axes((0, 2), 2)


# ---------------------------------------------------------------- matmul


def numpy_matmul_shape(a, b):
    return np.matmul(np.zeros(a), np.zeros(b)).shape


matmul_pairs = st.one_of(
    st.tuples(
        st.lists(st.integers(0, 3), min_size=1, max_size=4).map(tuple),
        st.lists(st.integers(0, 3), min_size=1, max_size=4).map(tuple),
    ),
    hnp.mutually_broadcastable_shapes(
        signature="(m?,n),(n,p?)->(m?,p?)", min_dims=0, max_dims=2, min_side=0, max_side=3
    ).map(lambda result: result.input_shapes),
)


@settings(max_examples=200, deadline=None)
@given(pair=matmul_pairs)
def test_matmul_shape_agrees_with_numpy(pair):
    a, b = pair
    assert our_outcome(matmul_shape, a, b) == numpy_outcome(numpy_matmul_shape, a, b)


def test_matmul_shape_examples():
    assert matmul_shape((2, 3), (3, 4)) == (2, 4)
    assert matmul_shape((3,), (3, 4)) == (4,)
    assert matmul_shape((2, 3), (3,)) == (2,)
    assert matmul_shape((3,), (3,)) == ()
    assert matmul_shape((10, 1, 2, 3), (5, 3, 4)) == (10, 5, 2, 4)
    assert matmul_shape((0, 3), (3, 0)) == (0, 0)


@pytest.mark.parametrize(
    "a, b, message",
    [
        (
            (2, 3),
            (4, 5),
            "matmul: shapes (2, 3) and (4, 5) do not match: the last dim of the first "
            "(3) must equal the second-to-last of the second (4)",
        ),
        (
            (3,),
            (4, 5),
            "matmul: shapes (3,) and (4, 5) do not match: the length of the 1-D first "
            "(3) must equal the second-to-last of the second (4)",
        ),
        (
            (2, 3),
            (4,),
            "matmul: shapes (2, 3) and (4,) do not match: the last dim of the first (3) "
            "must equal the length of the 1-D second (4)",
        ),
        (
            (2, 2, 3),
            (3, 3, 4),
            "matmul: shapes (2, 2, 3) and (3, 3, 4) do not match in their batch "
            "dims: shapes (2,) and (3,) cannot be broadcast",
        ),
        ((), (3,), "matmul: both operands must have at least 1 dim, got shapes () and (3,)"),
        ((3,), (), "matmul: both operands must have at least 1 dim, got shapes (3,) and ()"),
    ],
)
def test_matmul_shape_errors(a, b, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        matmul_shape(a, b)


# ---------------------------------------------------------------- PyTorch parity


@pytest.mark.parity
def test_parity_contiguous_strides_including_empty():
    torch = pytest.importorskip("torch")
    for shape in [(), (3,), (2, 3, 4), (2, 0, 3), (0,), (1, 1, 5)]:
        assert contiguous_strides(shape) == torch.empty(shape).stride(), shape
        assert is_contiguous(shape, torch.empty(shape).stride())
        transposed = torch.empty(shape).mT if len(shape) >= 2 else torch.empty(shape)
        assert is_contiguous(transposed.shape, transposed.stride()) == transposed.is_contiguous()


@pytest.mark.parity
def test_parity_broadcast_and_matmul_shapes():
    torch = pytest.importorskip("torch")
    small = [s for d in range(3) for s in itertools.product(range(3), repeat=d)]
    for x, y in itertools.product(small, repeat=2):
        try:
            expected = tuple(torch.broadcast_shapes(x, y))
        except RuntimeError:
            expected = "raises"
        assert our_outcome(broadcast_shapes, x, y) == expected, (x, y)
        if x and y:
            try:
                expected = tuple(torch.matmul(torch.zeros(x), torch.zeros(y)).shape)
            except RuntimeError:
                expected = "raises"
            assert our_outcome(matmul_shape, x, y) == expected, (x, y)


@pytest.mark.parity
@pytest.mark.parametrize("ndim, axis", [(2, 2), (2, -3), (0, 1), (0, -2), (3, 5)])
def test_parity_axis_out_of_range_message(ndim, axis):
    torch = pytest.importorskip("torch")
    with pytest.raises(IndexError) as ours:
        normalize_axis(axis, ndim)
    with pytest.raises(IndexError) as theirs:
        torch.zeros((2,) * ndim).sum(dim=axis)
    assert str(ours.value) in str(theirs.value)


@pytest.mark.parity
def test_parity_axis_wrapping_on_0d():
    torch = pytest.importorskip("torch")
    for axis in (0, -1):
        assert torch.tensor(2.0).sum(dim=axis).shape == torch.Size([])
        assert normalize_axis(axis, 0) == 0


def test_docstring_examples():
    import doctest

    import tensorlib.shape

    failures, tried = doctest.testmod(tensorlib.shape, optionflags=doctest.ELLIPSIS)
    assert tried >= 7 and failures == 0


def test_as_shape_accepts_ints_and_sequences_of_ints():
    assert as_shape(3) == (3,)
    assert as_shape([2, np.int64(4)]) == (2, 4)
    assert as_shape(()) == ()
    assert all(type(size) is int for size in as_shape(np.array([1, 2])))


@pytest.mark.parametrize(
    "bad, error, message",
    [
        (2.5, TypeError, r"size must be a sequence of ints, got 2\.5"),
        ((2, 2.5), TypeError, r"size must be a sequence of ints, got \(2, 2\.5\)"),
        ("a", TypeError, r"size must be a sequence of ints, got 'a'"),
        ((True, 2), TypeError, r"size must be a sequence of ints"),
        ((2, -1), ValueError, r"size \(2, -1\) has a negative dimension"),
    ],
)
def test_as_shape_rejects_what_is_not_a_shape(bad, error, message):
    with pytest.raises(error, match=message):
        as_shape(bad, "size")
