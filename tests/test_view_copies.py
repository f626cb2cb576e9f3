"""Chapter 2, section 20.6: ``tensorlib.engine.view_copies`` (the ``*_copy`` functions,
``narrow_copy``, the ``unsafe_`` splits, ``nonzero_static``, ``empty_strided``,
``empty_permuted``) against PyTorch, with float64 gradchecks."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

X = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 7.0

# name -> a call on either library's module and a (2, 3, 4) tensor
CASES = {
    "alias_copy": lambda m, t: m.alias_copy(t),
    "as_strided_copy": lambda m, t: m.as_strided_copy(t, (3, 3), (2, 1), 1),
    "diagonal_copy": lambda m, t: m.diagonal_copy(t, 1, 1, 2),
    "expand_copy": lambda m, t: m.expand_copy(t[:, :1], (2, 5, 4)),
    "expand_copy_minus_one": lambda m, t: m.expand_copy(t[0, 0], (3, -1)),
    "permute_copy": lambda m, t: m.permute_copy(t, (2, 0, 1)),
    "select_copy": lambda m, t: m.select_copy(t, 1, -1),
    "slice_copy": lambda m, t: m.slice_copy(t, 2, 1, 4, 2),
    "slice_copy_defaults": lambda m, t: m.slice_copy(t),
    "split_copy": lambda m, t: m.split_copy(t, 2, 2)[1],
    "split_with_sizes_copy": lambda m, t: m.split_with_sizes_copy(t, [1, 3], 2)[1],
    "squeeze_copy": lambda m, t: m.squeeze_copy(t[:, :1]),
    "squeeze_copy_dim": lambda m, t: m.squeeze_copy(t[:1, :1], 1),
    "squeeze_copy_dims": lambda m, t: m.squeeze_copy(t[:1, :1], (0, 1)),
    "t_copy": lambda m, t: m.t_copy(t[0]),
    "transpose_copy": lambda m, t: m.transpose_copy(t, 0, 2),
    "unbind_copy": lambda m, t: m.unbind_copy(t, 1)[2],
    "unfold_copy": lambda m, t: m.unfold_copy(t, 2, 2, 1),
    "unsqueeze_copy": lambda m, t: m.unsqueeze_copy(t, -1),
    "view_copy": lambda m, t: m.view_copy(t, (4, 6)),
    "narrow_copy": lambda m, t: m.narrow_copy(t, 2, 1, 2),
    "narrow_copy_method": lambda m, t: t.narrow_copy(1, 0, 2),
    "unsafe_chunk": lambda m, t: m.unsafe_chunk(t, 2, 2)[1],
    "unsafe_split": lambda m, t: m.unsafe_split(t, 2, 1)[1],
    "unsafe_split_with_sizes": lambda m, t: m.unsafe_split_with_sizes(t, [3, 1], 2)[0],
    "unsafe_split_method": lambda m, t: t.unsafe_split(3, 2)[0],
    "unsafe_chunk_method": lambda m, t: t.unsafe_chunk(3, 1)[2],
    "unsafe_split_with_sizes_method": lambda m, t: t.unsafe_split_with_sizes([2, 2], 2)[1],
}
COPIES = [n for n in CASES if "unsafe" not in n]


@pytest.mark.parity
@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_match_torch(name):
    torch = pytest.importorskip("torch")
    ours_in = tl.tensor(X, requires_grad=True)
    theirs_in = torch.tensor(X, requires_grad=True)
    ours, theirs = CASES[name](tl, ours_in), CASES[name](torch, theirs_in)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy())
    weights = np.linspace(-1.0, 2.0, ours.numel()).reshape(tuple(ours.shape))
    (ours * tl.tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy())


@pytest.mark.parametrize("name", COPIES)
def test_copies_share_no_memory_and_are_contiguous(name):
    source = tl.tensor(X)
    out = CASES[name](tl, source)
    assert out.is_contiguous()
    assert not np.shares_memory(out.numpy(), source.numpy())


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck_float64(name):
    x = tl.tensor(X, requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: CASES[name](tl, t), (x,))


@pytest.mark.parity
def test_tuples_are_returned_as_in_torch():
    torch = pytest.importorskip("torch")
    for name in ("split_copy", "unbind_copy", "unsafe_split", "unsafe_chunk"):
        args = (2,) if name != "unbind_copy" else ()
        ours = getattr(tl, name)(tl.tensor(X), *args)
        theirs = getattr(torch, name)(torch.tensor(X), *args)
        assert type(ours) is type(theirs) is tuple and len(ours) == len(theirs)


def test_detach_copy_is_outside_the_graph():
    x = tl.tensor(X, requires_grad=True)
    out = tl.detach_copy(x)
    assert not out.requires_grad and out.grad_fn is None
    np.testing.assert_array_equal(out.numpy(), X)


@pytest.mark.parity
def test_view_copy_with_a_dtype():
    torch = pytest.importorskip("torch")
    values = np.array([[1.5, -2.0], [0.25, 3.0]], dtype=np.float32)
    for dtype in ("int32", "int16", "float64"):
        ours = tl.view_copy(tl.tensor(values), getattr(tl, dtype))
        theirs = torch.view_copy(torch.tensor(values), getattr(torch, dtype))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(RuntimeError, match="must be divisible by 2"):
        tl.view_copy(tl.ones(3), tl.float64)
    with pytest.raises(RuntimeError, match="must be divisible by 2"):
        torch.view_copy(torch.ones(3), torch.float64)


@pytest.mark.parity
def test_nonzero_static_matches_torch():
    torch = pytest.importorskip("torch")
    values = np.array([[0, 1, 0], [2, 0, 3]])
    for size, fill in ((2, -1), (5, -1), (6, 9), (0, -1)):
        ours = tl.nonzero_static(tl.tensor(values), size=size, fill_value=fill)
        theirs = torch.nonzero_static(torch.tensor(values), size=size, fill_value=fill)
        assert ours.dtype == tl.int64
        assert ours.tolist() == theirs.tolist() and tuple(ours.shape) == tuple(theirs.shape)
    assert tl.tensor(values).nonzero_static(size=1).tolist() == [[0, 1]]
    assert tuple(tl.nonzero_static(tl.tensor(5.0), size=2).shape) == (2, 0)
    with pytest.raises(RuntimeError, match="'size' must be an non-negative integer"):
        tl.nonzero_static(tl.ones(2), size=-1)


@pytest.mark.parity
def test_empty_strided_and_empty_permuted_layouts_match_torch():
    torch = pytest.importorskip("torch")
    for size, stride in (((2, 3), (1, 2)), ((2, 3), (3, 1)), ((4,), (2,)), ((0, 3), (1, 2))):
        ours = tl.empty_strided(size, stride, dtype=tl.float64)
        theirs = torch.empty_strided(size, stride, dtype=torch.float64)
        assert (tuple(ours.shape), ours.stride()) == (tuple(theirs.shape), theirs.stride())
        assert ours.dtype == tl.float64
    for size, order in (((2, 3, 4), (2, 0, 1)), ((2, 3), (1, 0)), ((5,), (0,))):
        ours, theirs = tl.empty_permuted(size, order), torch.empty_permuted(size, order)
        assert (tuple(ours.shape), ours.stride()) == (tuple(theirs.shape), theirs.stride())
        assert ours.dtype == tl.float32
    made = tl.empty_strided((2, 2), (2, 1), requires_grad=True)
    assert made.requires_grad and made.is_leaf
    assert tl.empty_permuted((2, 2), (1, 0), requires_grad=True).requires_grad


@pytest.mark.parity
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m: m.empty_strided((2, 3), (1,)), r"dimensionality of sizes \(2\) must match"),
        (lambda m: m.empty_permuted((2, 3), (0,)), "does not match the length of the physical"),
        (lambda m: m.empty_permuted((2, 3), (0, 0)), "Duplicate dim not allowed"),
        (lambda m: m.empty_permuted((2, 3), (0, 5)), "Dimension out of range"),
    ],
)
def test_layout_errors_match_torch(call, match):
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match=match):
            call(lib)
