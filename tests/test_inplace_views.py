"""In-place changes of a view in the graph (chapter 2, section 22.5, "In-place changes of a view:
PyTorch's CopySlices"): values and gradients against PyTorch 2.13 (float64) for the common
patterns and every kind of view, float64 gradchecks of functions that change views in place, the
views made before a change (re-derived from the base), PyTorch's refusals (a view of a leaf, an
output of split/chunk/unbind, a view made under no_grad), a second derivative, and the paths
without views that must not change."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck, gradgradcheck


def _mul_on_select(lib, m, w):
    y = m * 1
    y[0].add_(w[:4])
    return y


def _copy_into_zeros(lib, m, w):
    out = lib.zeros(3, 2, dtype=lib.float64)
    out[:, 0].copy_(w[:3])
    return out * m[:, :2]


def _narrow_mul(lib, m, w):
    y = m * 1
    y.narrow(1, 0, 3).mul_(w[:3])
    return y


def _transpose_relu(lib, m, w):
    y = m * w[:4]
    v = y.t()
    v.relu_()
    return y


def _stale_view(lib, m, w):
    y = m * 1
    v1 = y[0]
    v2 = y[0:2]  # made before the change: re-derived from y's new node
    v1.mul_(w[:4])
    return v2 * 3


def _flat_strided_copy(lib, m, w):
    y = m * 1
    y.view(12)[::5].copy_(w[:3])
    return y


def _chain_clamp_setitem(lib, m, w):
    y = m * 1
    y.unsqueeze(0).squeeze(0).permute(1, 0)[2].clamp_(-0.5, 0.5)
    v = y.reshape(3, 4)[1]
    v[1:3] = w[:2]  # setitem on a view
    return y


def _as_strided_mul(lib, m, w):
    y = m * 1
    y.as_strided((2, 2), (4, 1), 1).mul_(w[:4].reshape(2, 2))
    return y


def _unfold_mul(lib, m, w):
    y = m * 1
    y.unfold(1, 2, 2).mul_(w[:2])  # windows that do not overlap
    return y


def _fills(lib, m, w):
    y = m * 1
    y.flatten()[3:7].masked_fill_(w[:4] > 0, 0.5)
    y[:, 0].zero_()
    y[2].fill_(w[0])
    return y


def _add_then_assign_back(lib, m, w):
    y = m * 1
    col = y[:, 3]
    y[0] += w[:4]  # a view changed in place, then assigned back
    return y + col.sum()


def _diagonal_of_a_view_sub(lib, m, w):
    y = m * 1
    y[:, :3].diagonal().sub_(w[:3], alpha=2)
    return y


def _view_of_plain_row(lib, m, w):
    out = lib.zeros(3, 4, dtype=lib.float64)
    row = out[0]  # made before: the base does not require grad yet
    out[:, 1].copy_(w[:3])
    return row * m[0]


def _select_exp_and_div(lib, m, w):
    y = m * 1
    y.select(1, 2).sin_()
    y.transpose(0, 1)[0].div_(w[:3].abs() + 1)
    return y


def _copy_from_another_view(lib, m, w):
    y = m * w[:4]
    flat = y.view(12)
    flat[6:].copy_(flat[:6])  # a value from the same base, through its graph before the change
    return y * flat[:6].sum()


PATTERNS = [
    _mul_on_select, _copy_into_zeros, _narrow_mul, _transpose_relu, _stale_view,
    _flat_strided_copy, _chain_clamp_setitem, _as_strided_mul, _unfold_mul, _fills,
    _add_then_assign_back, _diagonal_of_a_view_sub, _view_of_plain_row, _select_exp_and_div,
    _copy_from_another_view,
]


def _leaves(lib, seed=0):
    rng = np.random.default_rng(seed)
    m, w = rng.standard_normal((3, 4)), rng.standard_normal(6)
    return [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in (m, w)]


@pytest.mark.parity
@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda f: f.__name__.strip("_"))
def test_in_place_changes_of_views_match_pytorch(pattern):
    torch = pytest.importorskip("torch")
    ours, theirs = _leaves(tl), _leaves(torch)
    y, expected = pattern(tl, *ours), pattern(torch, *theirs)
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    (y * y).sum().backward()
    (expected * expected).sum().backward()
    for x, reference in zip(ours, theirs, strict=True):
        got = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        want = np.zeros(tuple(reference.shape)) if reference.grad is None else reference.grad
        np.testing.assert_allclose(got, np.asarray(want), atol=1e-10)


@pytest.mark.parity
def test_the_base_and_the_view_are_rebased_as_in_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        out = lib.zeros(3, 2, dtype=lib.float64)
        h = lib.ones(3, dtype=lib.float64, requires_grad=True)
        column = out[:, 0]
        column.copy_(h)
        assert out.requires_grad and not out.is_leaf
        assert out.grad_fn.name().endswith("CopySlices")
        assert column.grad_fn is not None and column._base is out
        assert column.grad_fn.name().startswith("AsStridedBackward")
        node = column.grad_fn
        parent = node.inputs[0].grad_fn if lib is tl else node.next_functions[0][0]
        assert parent is out.grad_fn
    b = tl.ones(2, 3) * 1
    assert b[0]._is_view() and not b._is_view() and b._base is None
    assert b.t()[1]._base is b  # a view of a view: the first base


@pytest.mark.parity
def test_the_cct_position_embedding_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    arrays = rng.standard_normal((2, 3, 4, 4)), rng.standard_normal((5, 3)), rng.standard_normal(
        (1, 16, 5))

    def tokens(lib):
        img = lib.tensor(arrays[0], dtype=lib.float64)
        kernel, pos = (lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays[1:])
        x = (kernel @ img.reshape(2, 3, 16)).reshape(2, 5, 4, 4).flatten(2).transpose(1, 2)
        x += pos
        (x.tanh() ** 2).sum().backward()
        return x, kernel.grad, pos.grad

    ours, theirs = tokens(tl), tokens(torch)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-10)


@pytest.mark.parity
def test_a_detached_alias_joins_the_graph_alone():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        w = lib.ones(4, dtype=lib.float64, requires_grad=True)
        b = w * 2
        d = b.detach()
        h = lib.ones(2, dtype=lib.float64, requires_grad=True)
        d[0:2].copy_(h)
        assert d.requires_grad and d.grad_fn.name().endswith("CopySlices")
        assert b.grad_fn.name().startswith("MulBackward")  # b's graph is not changed
        d.sum().backward()
        np.testing.assert_allclose(np.asarray(h.grad), [1.0, 1.0])


@pytest.mark.parity
def test_splits_that_pytorch_allows_to_change():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        w = lib.arange(4.0, dtype=lib.float64).requires_grad_()
        for pieces in (lambda t: t.tensor_split(2), lambda t: t.hsplit(2)):
            y = w * 1
            pieces(y)[0].mul_(2)
            y.sum().backward()
            np.testing.assert_allclose(np.asarray(w.grad), [2.0, 2.0, 1.0, 1.0])
            w.grad = None


def test_the_unsafe_splits_may_be_changed_and_are_followed():
    """PyTorch's unsafe_split pieces are not views to autograd (their change does not reach the
    base's graph: its gradient is then wrong, as its name warns); tensorlib's are followed."""
    w = tl.arange(4.0, dtype=tl.float64).requires_grad_()
    for pieces in (lambda t: t.unsafe_split(2), lambda t: t.unsafe_chunk(2)):
        y = w * 1
        pieces(y)[0].mul_(2)
        y.sum().backward()
        np.testing.assert_allclose(w.grad.numpy(), [2.0, 2.0, 1.0, 1.0])
        w.grad = None


def _changed_views(m, c):
    h = m * m
    h[0].mul_(c[:4])
    h.t()[1].add_(c[4:7])
    h.narrow(1, 2, 2).tanh_()
    h.view(12)[::5].copy_(c[7:10])
    return h


def _changed_plain(m, c):
    out = tl.zeros(2, 6, dtype=tl.float64)
    row = out[1]
    out[:, :4].copy_(m[:2])
    out.view(12)[1::3].mul_(c[:4])
    return out.sum(0) + row * c[4:10]


def test_gradcheck_through_in_place_changes_of_views():
    rng = np.random.default_rng(2)
    m = tl.tensor(rng.standard_normal((3, 4)), dtype=tl.float64, requires_grad=True)
    c = tl.tensor(rng.standard_normal(10), dtype=tl.float64, requires_grad=True)
    assert gradcheck(_changed_views, (m, c))
    assert gradcheck(_changed_plain, (m, c))


def test_gradgradcheck_through_an_in_place_change_of_a_view():
    rng = np.random.default_rng(3)
    m = tl.tensor(rng.standard_normal((3, 4)), dtype=tl.float64, requires_grad=True)
    c = tl.tensor(rng.standard_normal(10), dtype=tl.float64, requires_grad=True)
    assert gradgradcheck(_changed_views, (m, c))
    assert gradgradcheck(_changed_plain, (m, c))


@pytest.mark.parity
def test_second_derivative_matches_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = x * 1
        y[0:2].mul_(x[0:2])
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        results.append((np.asarray(g.detach()), np.asarray(gg)))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


LEAF_VIEW = "a view of a leaf Variable that requires grad is being used in an in-place operation"
MULTI = "This view is the output of a function that returns multiple views"
NO_GRAD = "A view was created in no_grad mode and is being modified inplace with grad mode enabled"
STALE_NO_GRAD = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled"
)


def _refusals(lib):
    w = lib.ones(4, requires_grad=True)
    y = w * 1
    with lib.no_grad():
        made_without_grad = y[1:3]
        of_leaf = w[0:2]
    h = lib.ones(2, requires_grad=True)
    return [
        (lambda: w[0].add_(1), LEAF_VIEW),
        (lambda: w.view(2, 2).mul_(2), LEAF_VIEW),
        (lambda: (w * 1).split(2)[0].mul_(2), "Output 0 of Split is a view and is being "
                                              "modified inplace. " + MULTI),
        (lambda: (w * 1).chunk(2)[1].mul_(2), "Output 1 of Split is a view"),
        (lambda: (w * 1).unbind()[0].mul_(2), "Output 0 of Unbind is a view"),
        (lambda: (w * 1).split([1, 3])[1].mul_(2), "Output 1 of SplitWithSizes is a view"),
        (lambda: lib.zeros(4).split(2)[0].copy_(h), NO_GRAD + ". " + MULTI),
        (lambda: made_without_grad.mul_(2), NO_GRAD + ". Given that"),
        (lambda: of_leaf.mul_(2), NO_GRAD),
    ]


@pytest.mark.parity
@pytest.mark.parametrize("index", range(9))
def test_pytorchs_refusals(index):
    torch = pytest.importorskip("torch")
    change, message = _refusals(tl)[index]
    with pytest.raises(RuntimeError, match=_escaped(message)):
        change()
    change, message = _refusals(torch)[index]
    with pytest.raises(RuntimeError, match=_escaped(message)):
        change()


def _escaped(message):
    import re

    return re.escape(message)


@pytest.mark.parity
def test_stale_views_pytorch_will_not_re_derive_raise_when_used():
    torch = pytest.importorskip("torch")
    w = tl.ones(4, requires_grad=True)
    y = w * 1
    with tl.no_grad():
        made_without_grad = y[0:2]
    pieces = y.split(2)
    y[1:3].mul_(2)
    with pytest.raises(RuntimeError, match=_escaped(STALE_NO_GRAD)):
        made_without_grad * w[:2]
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view and its base or another "
                                           "view of its base has been modified inplace"):
        pieces[0] * w[:2]
    w2 = torch.ones(4, requires_grad=True)
    y2 = w2 * 1
    with torch.no_grad():
        made2 = y2[0:2]
    y2[1:3].mul_(2)
    with pytest.raises(RuntimeError, match=_escaped(STALE_NO_GRAD)):
        made2 * w2[:2]


def test_an_overlapping_view_is_not_written_in_the_graph():
    """PyTorch's message; PyTorch itself does not look for the overlap of an as_strided view."""
    h = tl.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        tl.zeros(4).as_strided((2, 2), (1, 1)).copy_(h[:2].expand(2, 2))
    overlapping = tl.zeros(5).unfold(0, 3, 1)  # windows that share entries: read-only
    with pytest.raises(RuntimeError, match="read-only"):
        overlapping.copy_(h.expand(3, 3))


def test_a_stale_view_is_re_derived_even_when_only_read_later():
    w = tl.tensor([1.0, 2.0, 3.0], dtype=tl.float64, requires_grad=True)
    out = tl.zeros(3, dtype=tl.float64)
    head = out[:2]
    out.copy_(w * 3)  # out owns its memory: its views follow
    head.backward(tl.ones(2, dtype=tl.float64))  # straight from the view, no op in between
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 3.0, 0.0])


def test_the_paths_without_views_are_unchanged():
    w = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    h = w * 2
    h += 1
    h *= w
    h.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [4 * 1.0 + 1, 4 * 2.0 + 1])  # 4w + 1
    x = w * 2
    y = x.sin()
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1)
    with tl.no_grad():
        w[0].add_(1)  # an optimizer's update through a view
        w.mul_(2)
    np.testing.assert_allclose(w.detach().numpy(), [4.0, 4.0])
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        (w * 1)[:1].expand(3).mul_(2)
    data = tl.zeros(4)
    data[1:3].add_(1)  # no gradient involved: a plain write
    assert not data.requires_grad and data._version == 1


def test_the_list_of_views_keeps_no_view_alive_and_stays_short():
    import gc
    import weakref

    base = tl.zeros(8) * 1
    first = base[0:2]
    ref = weakref.ref(first)
    del first
    gc.collect()
    assert ref() is None
    for _ in range(1000):
        base.t()
    assert len(base._versions[3]) <= 64


@pytest.mark.parity
def test_diagonal_and_an_element_of_a_vector_are_views_as_in_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        b = lib.zeros(2, 3, 3)
        b.diagonal(1, 1, 2).fill_(2.0)  # a strided view of b's memory, not a copy
        b[1].diagonal().add_(1.0)
        v = lib.zeros(3)
        v[1].add_(5.0)  # a 0-d view
        assert v[1]._base is v and b.diagonal()._base is b
        expected = np.zeros((2, 3, 3))
        expected[:, [0, 1], [1, 2]] = 2.0
        expected[1, [0, 1, 2], [0, 1, 2]] += 1.0
        np.testing.assert_allclose(np.asarray(b), expected)
        np.testing.assert_allclose(np.asarray(v), [0.0, 5.0, 0.0])
        copied = lib.diag(b[0])  # diag of a matrix is a copy in both
        copied.add_(1.0)
        assert float(b[0].sum()) == 4.0 and not copied._is_view()


@pytest.mark.parity
def test_a_stale_split_of_a_plain_tensor_raises_when_used_as_in_pytorch():
    torch = pytest.importorskip("torch")
    message = _escaped(STALE_NO_GRAD + ". " + MULTI)
    for lib in (tl, torch):
        w = lib.ones(4, requires_grad=True)
        base = (w * 1).detach()
        pieces = base.unbind()
        base[1:3].copy_(w[:2] * 3)  # the plain base joins the graph
        with pytest.raises(RuntimeError, match=message):
            pieces[1] * 2  # no other input requires grad: still refused, not silently cut off


# The reviewer's findings on views (session 7): each test failed before its fix.

STALE_SPLIT = (
    "Output 1 of Split is a view and its base or another view of its base has been modified "
    "inplace. " + MULTI
)


def _stale_split_piece(lib):
    m = lib.ones(4, dtype=lib.float64, requires_grad=True)
    w = lib.full((4,), 3.0, dtype=lib.float64, requires_grad=True)
    y = m * 2
    _, piece = y.split(2)
    y.mul_(w)  # the piece now holds 2 * m * w; its old node knows only 2 * m
    return m, piece


def _stale_no_grad_view(lib):
    m = lib.ones(3, dtype=lib.float64, requires_grad=True)
    y = m * 2
    with lib.no_grad():
        view = y[0:2]
    y.mul_(3)
    return m, view


@pytest.mark.parity
@pytest.mark.parametrize("start", ["backward", "create_graph", "autograd.grad", "register_hook"])
@pytest.mark.parametrize("made", ["split", "no_grad"])
def test_a_pass_from_a_stale_view_pytorch_will_not_re_derive_raises(start, made):
    """A backward started at such a view (or a hook on it) would run its old node: a silently
    wrong gradient (split) or an error of no use (no_grad). PyTorch raises its message."""
    torch = pytest.importorskip("torch")
    message = STALE_SPLIT if made == "split" else STALE_NO_GRAD
    for lib in (tl, torch):
        m, view = (_stale_split_piece if made == "split" else _stale_no_grad_view)(lib)
        seed = lib.ones(2, dtype=lib.float64)
        with pytest.raises(RuntimeError, match=_escaped(message)):
            if start == "backward":
                view.backward(seed)
            elif start == "create_graph":
                view.backward(seed, create_graph=True)
            elif start == "autograd.grad":
                lib.autograd.grad(view, m, seed)
            else:
                view.register_hook(lambda g: g)
        assert m.grad is None


def test_a_pass_that_reaches_a_refused_node_raises_pytorchs_message():
    m, view = _stale_no_grad_view(tl)
    with pytest.raises(RuntimeError, match=_escaped(STALE_NO_GRAD)):
        tl.autograd.functional.vjp(lambda _: view, m, tl.ones(2, dtype=tl.float64))


@pytest.mark.parity
def test_a_pass_from_a_view_re_derived_after_its_base_changed_matches_pytorch():
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (tl, torch):
        m = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([0.5, -1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = m * 2
        view = y[1:3]
        y.mul_(w)
        view.backward(lib.tensor([1.0, 10.0], dtype=lib.float64))
        grads.append((np.asarray(m.grad), np.asarray(w.grad)))
    for ours, theirs in zip(*grads, strict=True):
        np.testing.assert_allclose(ours, theirs)


def _result_with_a_base_of_its_own(lib, name, x):
    """Ops whose numpy result is itself a view of a temporary array (``h._data.base`` is set)."""
    eye = lib.eye(4, dtype=lib.float64)
    return {
        "layer_norm": lambda: lib.nn.functional.layer_norm(x, (4,), eye[0] + 1.5, eye[1] - 0.5),
        "einsum": lambda: lib.einsum("ij,jk->ik", x, eye),
        "batched matmul": lambda: x.reshape(1, 3, 4) @ eye.reshape(1, 4, 4),
        "repeat": lambda: x.repeat(2, 1),
    }[name]()


@pytest.mark.parity
@pytest.mark.parametrize("name", ["layer_norm", "einsum", "batched matmul", "repeat"])
def test_a_result_with_a_numpy_base_changes_in_place_after_a_view_of_it(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    xa, ba = rng.standard_normal((3, 4)), rng.standard_normal(4)
    grads = []
    for lib in (tl, torch):
        x = lib.tensor(xa, requires_grad=True)
        b = lib.tensor(ba, requires_grad=True)
        h = _result_with_a_base_of_its_own(lib, name, x)
        h[0]  # a view, gone at once
        row = h.reshape(-1, 4)[1]  # a view kept: it follows the change
        h.add_(b)
        ((h * h).sum() + (row * row * 3).sum()).backward()
        grads.append((np.asarray(x.grad), np.asarray(b.grad)))
    for ours, theirs in zip(*grads, strict=True):
        np.testing.assert_allclose(ours, theirs, atol=1e-10)


@pytest.mark.parity
def test_amax_result_changed_in_place_after_a_view_of_it():
    """PyTorch's amax saves its result, so its backward refuses the changed one; tensorlib's keeps
    the mask of the maxima and gives the gradient of the same program written out of place."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    xa, ba = rng.standard_normal((3, 4)), rng.standard_normal(3)
    x = tl.tensor(xa, requires_grad=True)
    b = tl.tensor(ba, requires_grad=True)
    h = x.amax(1)
    h[0]
    h.add_(b)
    (h * h).sum().backward()
    x2 = torch.tensor(xa, requires_grad=True)
    b2 = torch.tensor(ba, requires_grad=True)
    h2 = x2.amax(1)
    h2[0]
    h2.add_(b2)  # accepted in both
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (h2 * h2).sum().backward()
    x2 = torch.tensor(xa, requires_grad=True)  # torch's failed pass reached b2.grad already
    b2 = torch.tensor(ba, requires_grad=True)
    h2 = x2.amax(1) + b2
    (h2 * h2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), b2.grad.numpy(), atol=1e-12)


def test_detach_of_a_live_view_is_still_not_changed_in_the_graph():
    y = tl.ones(2, 3, requires_grad=True) * 2
    row = y[0]
    alias = row.detach()
    with pytest.raises(RuntimeError, match="shares memory with another without being its view"):
        alias.mul_(tl.ones(3, requires_grad=True))
    assert row.grad_fn is not None


@pytest.mark.parity
def test_a_detached_constant_is_used_after_its_source_changed_in_place():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        m = lib.ones(2, 3, requires_grad=True)
        w = lib.ones(3, requires_grad=True)
        y = m * 2
        row = y[0]  # some view of y
        target = y.detach()  # a constant, as a target
        y.mul_(w)
        (target * w).sum().backward()
        np.testing.assert_allclose(np.asarray(w.grad), [4.0, 4.0, 4.0])
        assert row.grad_fn is not None


@pytest.mark.parity
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copy_of_a_view_owns_its_memory(how):
    import copy
    import pickle

    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        base = lib.arange(6.0, dtype=lib.float64).reshape(2, 3)
        base.add_(1)
        view = base[1]
        copied = copy.deepcopy(view) if how == "deepcopy" else pickle.loads(pickle.dumps(view))
        assert not copied._is_view() and copied._base is None
        np.testing.assert_allclose(np.asarray(copied), [4.0, 5.0, 6.0])
        w = lib.ones(3, dtype=lib.float64, requires_grad=True)
        copied.mul_(w)  # the copy joins the graph as a tensor of its own
        copied.sum().backward()
        np.testing.assert_allclose(np.asarray(w.grad), [4.0, 5.0, 6.0])
        np.testing.assert_allclose(np.asarray(base[1]), [4.0, 5.0, 6.0])
    ours = tl.arange(6.0).reshape(2, 3)
    ours.add_(1)
    assert copy.deepcopy(ours[1])._version == ours._version  # the count of changes is kept


class _Masked(tl.nn.Module):
    """nanoGPT's causal mask buffer: a view of the lower triangle."""

    def __init__(self, size=64):
        super().__init__()
        self.register_buffer("bias", tl.tril(tl.ones(size, size)).view(1, 1, size, size))


def test_the_pickle_of_a_view_does_not_carry_its_base():
    import copy
    import pickle

    view = tl.zeros(1000, dtype=tl.float64)[:10]
    assert len(pickle.dumps(view)) < len(pickle.dumps(view.clone())) + 64
    module = _Masked()
    assert len(pickle.dumps(module)) < 64 * 64 * 4 * 1.2  # one copy of the mask, not two
    for copied in (copy.deepcopy(module), pickle.loads(pickle.dumps(module))):
        assert not copied.bias._is_view()
        np.testing.assert_array_equal(copied.bias.numpy(), module.bias.numpy())


@pytest.mark.parity
def test_deepcopy_of_a_base_and_its_views_shares_memory_as_pytorchs_storage_copy():
    """One ``copy.deepcopy`` copies a memory once: the copies of a base and of its views (a
    slice, a transpose, an expand, a detached alias) share it as the originals do, in any order;
    a view copied alone is a copy, not a view (the review's 10)."""
    import copy

    torch = pytest.importorskip("torch")
    seen = []
    for lib in (torch, tl):
        base = lib.arange(6.0).reshape(2, 3)
        row, turned, alias = base[1], base.t(), base.detach()
        spread = lib.arange(3.0).expand(2, 3)
        row2, base2, turned2, alias2 = copy.deepcopy([row, base, turned, alias])
        spread2 = copy.deepcopy(spread)
        base2.add_(10)
        alone = copy.deepcopy(base[0])
        alone.fill_(-1.0)
        seen.append((row2.tolist(), turned2.tolist(), alias2.tolist(), list(spread2.stride()),
                     alone.tolist(), base.tolist(), row2._base is None))
    assert seen[1] == seen[0]


@pytest.mark.parity
def test_split_under_no_grad_gives_the_no_grad_message():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        y = lib.ones(4, requires_grad=True) * 1
        with lib.no_grad():
            piece, _ = y.split(2)
        with pytest.raises(RuntimeError, match=_escaped(NO_GRAD + ". Given that")):
            piece.mul_(2)


@pytest.mark.parity
def test_detach_in_place_of_a_view_is_refused():
    torch = pytest.importorskip("torch")
    message = "Can't detach views in-place. Use detach() instead."
    for lib in (tl, torch):
        for view in ((lib.ones(2, 3, requires_grad=True) * 2)[0], lib.ones(2, 3)[0]):
            with pytest.raises(RuntimeError, match=_escaped(message)):
                view.detach_()
        y = lib.ones(2, 3, requires_grad=True) * 2
        assert y.detach_() is y and not y.requires_grad and y.grad_fn is None


@pytest.mark.parity
def test_an_expanded_target_gives_pytorchs_error():
    torch = pytest.importorskip("torch")
    message = "unsupported operation: more than one element of the written-to tensor refers to a "
    for lib in (tl, torch):
        expanded = lib.zeros(1).expand(3)
        with pytest.raises(RuntimeError, match=_escaped(message)):
            expanded.add_(1)
        with pytest.raises(RuntimeError, match=_escaped(message)):
            expanded.copy_(lib.ones(3))
        with pytest.raises(RuntimeError, match=_escaped(message)):  # in the graph
            expanded.mul_(lib.ones(3, requires_grad=True))
    with pytest.raises(RuntimeError, match="overlapping unfold windows"):
        tl.zeros(4).unfold(0, 2, 1).add_(1)  # PyTorch lets it through (writes in no set order)


_BASIC_KEYS = [
    1, -1, (slice(None), 1), (1, 2), None, slice(None, None, 2), (Ellipsis, 0), (None, 1),
]


@pytest.mark.parity
@pytest.mark.parametrize("key", _BASIC_KEYS, ids=repr)
def test_assignment_at_a_basic_key_is_recorded_as_copy_slices(key):
    """``h[key] = v`` with ints, slices, None and ... is PyTorch's ``h[key].copy_(v)``: the same
    node (CopySlices) and gradients."""
    torch = pytest.importorskip("torch")
    got = {}
    for lib in (torch, tl):
        w = lib.arange(1.0, 4.0, dtype=lib.float64).requires_grad_()
        v = lib.tensor(5.0, dtype=lib.float64, requires_grad=True)
        h = (w * lib.ones(4, 3, dtype=lib.float64)).clone()
        h[key] = v * w[0] + w[1]
        (h * lib.arange(12.0, dtype=lib.float64).reshape(4, 3)).sum().backward()
        name = type(h.grad_fn).__name__ if lib is torch else h.grad_fn.name()
        got[lib.__name__] = (name, w.grad.tolist(), v.grad.item(), h.tolist())
    assert got["tensorlib"] == got["torch"]


@pytest.mark.parity
def test_assignment_at_a_basic_key_drops_leading_ones_and_casts():
    torch = pytest.importorskip("torch")
    got = {}
    for lib in (torch, tl):
        w = lib.arange(1.0, 4.0, dtype=lib.float64).requires_grad_()
        h = lib.zeros(4, 3)  # float32: the float64 value is cast, in the graph
        h[2] = (w * 2).reshape(1, 1, 3)
        h[0] = 7
        (h * lib.arange(12.0).reshape(4, 3)).sum().backward()
        got[lib.__name__] = (h.dtype == lib.float32, h.tolist(), w.grad.tolist())
    assert got["tensorlib"] == got["torch"]


@pytest.mark.parity
def test_assignment_into_a_leaf_at_a_basic_key_gives_pytorchs_message():
    torch = pytest.importorskip("torch")
    for lib in (torch, tl):
        w = lib.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            w[0] = 1.0
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            w[[0, 1]] = 1.0


def test_assignment_at_a_basic_key_gradchecks():
    def rows_written(w):
        h = tl.zeros(3, 4, dtype=tl.float64)
        h[0] = w.sin()
        h[1, 1:3] = w[:2] * w[2:]
        h[2] = h[0] + h[1]  # reads the rows written before (add saves neither)
        h[:, 3] = w[3] ** 2
        return h

    w = tl.tensor(np.random.default_rng(0).standard_normal(4), requires_grad=True)
    assert gradcheck(rows_written, (w,))
    assert gradgradcheck(rows_written, (w,))


def _bytes_held_by_writing_rows(rows: int, width: int, keep_views: bool) -> int:
    """numpy memory (tracemalloc) held after writing the rows of a float32 buffer one by one from
    a tensor that requires grad, the graph of all the changes alive."""
    import tracemalloc

    w = tl.randn(width, requires_grad=True)
    buffer = tl.zeros(rows, width)
    kept = []
    tracemalloc.start()
    try:
        for i in range(rows):
            buffer[i] = w * float(i)
            if keep_views:
                kept.append(buffer[i])  # a view kept per step: re-derived at every change
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    buffer.sum().backward()
    assert w.grad.tolist() == [float(sum(range(rows)))] * width
    return held


@pytest.mark.parametrize("keep_views", [False, True])
def test_writing_rows_keeps_the_regions_not_copies_of_the_buffer(keep_views):
    """Each change keeps its region (old values, positions, the new values), never a copy of the
    whole buffer: 64 rows of a 1 MiB buffer held 64 MiB and more before (a copy per row), about
    9 MiB now with a view of each row kept (its positions computed once), 5 MiB without."""
    rows, width = 64, 4096
    held = _bytes_held_by_writing_rows(rows, width, keep_views)
    assert held < 12 * rows * width * 4, f"{held / (rows * width * 4):.1f} buffers' worth"


@pytest.mark.parity
def test_a_wrong_shape_assigned_at_a_basic_key_gives_pytorchs_messages():
    torch = pytest.importorskip("torch")
    for lib in (torch, tl):
        h = lib.zeros(4, 3)
        with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(3\) must match "
                           r"the existing size \(4\) at non-singleton dimension 0"):
            h[1] = lib.ones(4, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"the number of sizes provided \(1\) must be "
                           r"greater or equal to the number of dimensions in the tensor \(2\)"):
            h[1] = lib.ones(2, 3, requires_grad=True)
        assert h.abs().sum().item() == 0  # nothing written


def test_augmented_assignment_at_a_basic_key_has_second_derivatives():
    """``h[0] *= y`` runs ``v = h[0]; v.mul_(y); h[0] = v``: the last write records ``where``
    on ``v``, whose memory it changes; the recorded backward of ``where`` reads only its
    condition (``graph_reads``), so create_graph passes through it, as in PyTorch."""
    def augmented(x, y):
        h = x * 1
        h[0] *= y
        h[1:3] += y
        return h.sin()

    rng = np.random.default_rng(4)
    x = tl.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    y = tl.tensor(rng.standard_normal(2), requires_grad=True)
    assert gradcheck(augmented, (x, y))
    assert gradgradcheck(augmented, (x, y))


@pytest.mark.parity
def test_deepcopy_of_a_tensor_in_the_graph_is_refused_as_pytorch():
    import copy

    torch = pytest.importorskip("torch")
    for lib in (torch, tl):
        x = lib.ones(2, requires_grad=True)
        for made in (x * 2, x[0:1]):
            with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
                copy.deepcopy(made)
        assert copy.deepcopy(x).requires_grad  # a leaf still copies


@pytest.mark.parity
def test_matrix_power_one_is_a_new_tensor():
    torch = pytest.importorskip("torch")
    for lib in (torch, tl):
        a = lib.eye(2)
        lib.linalg.matrix_power(a, 1).add_(1)
        assert a.tolist() == [[1.0, 0.0], [0.0, 1.0]]
