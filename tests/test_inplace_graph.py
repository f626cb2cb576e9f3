"""In-place ops inside the autograd graph (chapter 2, "In-place changes and version counters"):
values and gradients of chains of in-place ops against PyTorch's (float64), float64 gradchecks,
the errors PyTorch raises (a leaf that requires grad, a saved value changed before backward) and
tensorlib's refusal of views; then the small API fixes of the same chapter (bool triu/tril,
``size=``/``shape=`` keywords, ``dtype=`` of cumsum/cumprod, ``rounding_mode``, the dtype names
tensorlib lacks, ``layout``)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl


def _vit_embedding(lib, x, pos):
    h = x @ x.transpose(-2, -1)  # a non-leaf that owns its memory
    h += pos
    return h


def _masked_scores(lib, q, k):
    scores = q @ k.transpose(-2, -1)
    mask = lib.ones(4, 4, dtype=lib.bool).triu(1)
    scores.masked_fill_(mask, float("-inf"))
    return scores.softmax(-1)


def _setitem_plain(lib, w, v):
    out = lib.zeros(4, 3, dtype=lib.float64)
    out[1:] = v
    return out * w


def _setitem_non_leaf(lib, w, v):
    h = w * 1.5
    h[0] = v[0]
    h[2] = 0.0
    h[:, 1] = v[1, 0]
    return h * w


def _index_add(lib, w, v):
    out = lib.zeros(4, 3, dtype=lib.float64)
    out.index_add_(0, lib.tensor([0, 2, 2]), v)
    return out + w


def _index_copy(lib, w, v):
    h = w * 3
    h.index_copy_(0, lib.tensor([1, 3, 0]), v)
    return h * w


def _clamp_relu(lib, w):
    h = w * 2
    h.clamp_(-0.5, 0.8)
    h.relu_()
    return h * w


def _chain(lib, w):
    h = w * 2
    h += 1
    h *= w  # MulBackward reads the old h: the snapshot
    h.sub_(w, alpha=2)
    h /= w + 3
    return h


def _consumer_before(lib, w):
    h = w * 2
    y = h * 3  # made before the change: its gradient goes to the old h
    h *= 2
    return y + h


def _value_from_itself(lib, w):
    h = w.sin()
    y = h * 3
    h += y
    return h


def _copy_fill_zero(lib, w, v):
    h = w * 2
    h.copy_(v)
    g = w * 1
    g.fill_(v.sum())
    z = w + 1
    z.zero_()
    z += w
    return h * w + g * z


def _masked_fill_tensor_value(lib, w, v):
    h = w * 2
    h.masked_fill_(w > 0, v.sum())
    return h * w


def _scatter(lib, w, v):
    h = w * 2
    index = lib.tensor([[0, 1, 2], [2, 0, 1]])
    h.scatter_(1, index, v)
    h.scatter_add_(0, index, v)
    return h * w


# (name, function of (library, *tensors), input shapes)
CASES = [
    ("vit x += pos", _vit_embedding, [(2, 3, 4), (3, 3)]),
    ("masked_fill_ -inf", _masked_scores, [(4, 3), (4, 3)]),
    ("setitem on a plain tensor", _setitem_plain, [(4, 3), (3, 3)]),
    ("setitem on a non-leaf", _setitem_non_leaf, [(4, 3), (4, 3)]),
    ("index_add_", _index_add, [(4, 3), (3, 3)]),
    ("index_copy_", _index_copy, [(4, 3), (3, 3)]),
    ("clamp_ relu_", _clamp_relu, [(7,)]),
    ("chain", _chain, [(5,)]),
    ("consumer before", _consumer_before, [(5,)]),
    ("value from itself", _value_from_itself, [(5,)]),
    ("copy_ fill_ zero_", _copy_fill_zero, [(3, 2), (3, 2)]),
    ("masked_fill_ tensor value", _masked_fill_tensor_value, [(5,), (1,)]),
    ("scatter_ scatter_add_", _scatter, [(3, 3), (2, 3)]),
]
IDS = [c[0] for c in CASES]


def _arrays(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


def _run(lib, fn, arrays):
    inputs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *inputs)
    weights = np.linspace(0.5, 1.5, int(np.prod(out.shape))).reshape(tuple(out.shape))
    out.backward(lib.tensor(weights, dtype=lib.float64))
    grads = [np.zeros(a.shape) if x.grad is None else x.grad.detach().numpy() for x, a in
             zip(inputs, arrays, strict=True)]
    return out.detach().numpy(), grads


@pytest.mark.parity
@pytest.mark.parametrize("name, fn, shapes", CASES, ids=IDS)
def test_values_and_gradients_match_pytorch_float64(name, fn, shapes):
    torch = pytest.importorskip("torch")
    arrays = _arrays(shapes, len(name))
    (ours, our_grads), (theirs, their_grads) = (_run(lib, fn, arrays) for lib in (tl, torch))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    for mine, reference in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-10, atol=1e-12)


def _square_in_place(lib, w):
    h = w * 2
    h *= h  # PyTorch raises here (MulBackward saved h); tensorlib's snapshot gives the gradient
    return h


def _exp_then_tanh(lib, w):
    h = w * 0.5
    h.exp_()
    h.tanh_()  # PyTorch raises (exp_ saved its result); tensorlib's node kept its own copy
    return h


@pytest.mark.parametrize(
    "name, fn, shapes",
    [*CASES, ("h *= h", _square_in_place, [(5,)]), ("exp_ tanh_", _exp_then_tanh, [(3, 3)])],
    ids=[*IDS, "h *= h", "exp_ tanh_"],
)
def test_gradcheck_float64(name, fn, shapes):
    operands = tuple(tl.tensor(a, requires_grad=True) for a in _arrays(shapes, 3))
    assert tl.autograd.gradcheck(lambda *t: fn(tl, *t), operands)


def test_grad_fn_is_the_in_place_ops_node_and_aliases_see_the_values():
    w = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    h = w * 2
    alias = h.detach()
    h += 1
    assert h.grad_fn.name() == "AddBackward" and not h.is_leaf and h._version == 1
    np.testing.assert_array_equal(alias.numpy(), [3.0, 5.0])
    h.masked_fill_(h > 4, 0.0)
    assert h.grad_fn.name() == "MaskedFillBackward" and h._version == 2
    plain = tl.zeros(3, dtype=tl.float64)
    plain[1:] = w
    assert plain.requires_grad and plain.grad_fn is not None


@pytest.mark.parity
def test_a_saved_value_changed_in_place_raises_at_backward_as_in_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        w = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = w * 2
        y = h.sin()  # sin's backward reads h
        h += 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            (y.sum() + h.sum()).backward()
        g = w.exp()  # exp's backward reads its output
        g.masked_fill_(g > 3, 0.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            g.sum().backward()


def test_a_leaf_that_requires_grad_is_refused():
    w = tl.ones(3, requires_grad=True)
    for change in (lambda: w.add_(1), lambda: w.__setitem__(0, 2.0), lambda: w.relu_()):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            change()
    with tl.no_grad():
        w.add_(1)  # the optimizer's update
    assert w._version == 1


def test_views_in_the_graph_are_followed_as_in_pytorch():
    """In-place changes of views used to be refused; they now rebase the base (CopySlices):
    tests/test_inplace_views.py checks them against PyTorch."""
    w = tl.ones(4, requires_grad=True)
    h = w * 2
    h[1:3].mul_(2)
    assert h.grad_fn.name() == "CopySlices"
    g = h[:, None]
    g[0] += 1  # x[k] += v changes a view, then assigns it back
    plain = tl.zeros(4)
    plain[1:].copy_(w[:3])  # a plain tensor joins the graph through its view
    assert plain.requires_grad and not plain.is_leaf
    (h.sum() + plain.sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 5.0, 5.0, 2.0])
    with pytest.raises(RuntimeError, match="part of the graph"):
        (w * 2).uniform_()  # random draws are not recorded


def test_a_view_made_before_an_in_place_change_of_its_base_follows_it():
    w = tl.tensor([1.0, 2.0, 3.0, 4.0], dtype=tl.float64, requires_grad=True)
    h = w * 2
    view = h[1:3]
    h.add_(1)  # h owns its memory: the view's node is re-derived from h's new one
    assert view.grad_fn.name() == "AsStridedBackward"
    (view * w[:2]).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [5.0, 9.0, 4.0, 0.0])  # view = 2 w[1:3] + 1
    w.grad = None
    out = tl.zeros(3, dtype=tl.float64)
    plain_view = out[1:]
    out[1:] = w[:2]
    assert plain_view.requires_grad  # the gradient that now flows through out reaches it
    (plain_view * w[:2]).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 4.0, 0.0, 0.0])


@pytest.mark.parity
def test_read_through_a_view_then_write_the_base_matches_pytorch():
    torch = pytest.importorskip("torch")

    def fn(lib, w, v):
        h = w * 2
        early = h[1:3] * 3  # used before the change: reads the old h
        h[:, 0] = h[:, 0] + v[:, 0]  # the base changed, with a view made before (h[:, 0])
        h[0] = h[1] * 2
        return h * w + early.sum()

    arrays = _arrays([(4, 3), (4, 3)], 11)
    (ours, our_grads), (theirs, their_grads) = (_run(lib, fn, arrays) for lib in (tl, torch))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    for mine, reference in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-10, atol=1e-12)


# --- the chapter's small API fixes --------------------------------------------------------


@pytest.mark.parity
@pytest.mark.parametrize("diagonal", [-1, 0, 1])
def test_triu_tril_of_bool_stay_bool(diagonal):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(diagonal + 1).random((2, 3, 4)) > 0.5
    for name in ("triu", "tril"):
        ours = getattr(tl, name)(tl.tensor(a), diagonal)
        theirs = getattr(torch, name)(torch.tensor(a), diagonal)
        assert ours.dtype == tl.bool and theirs.dtype == torch.bool
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        np.testing.assert_array_equal(getattr(tl.tensor(a), name)(diagonal).numpy(), theirs.numpy())
        mine = tl.tensor(a)
        getattr(mine, name + "_")(diagonal)
        assert mine.dtype == tl.bool
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parity
def test_size_and_shape_keywords():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        assert tuple(lib.empty(size=(2, 3)).shape) == (2, 3)
        assert tuple(lib.zeros(size=(2, 3)).shape) == (2, 3)
        assert tuple(lib.ones(size=[4]).shape) == (4,)
        np.testing.assert_array_equal(lib.full(size=(2,), fill_value=3).numpy(), [3, 3])
        x = lib.arange(6.0)
        assert tuple(x.reshape(shape=(2, 3)).shape) == (2, 3)
        assert tuple(x.view(size=(3, 2)).shape) == (3, 2)
        assert tuple(x.reshape(2, 3).shape) == tuple(x.view((3, -1)).shape)[::-1]
        with pytest.raises(TypeError, match="multiple values for argument 'size'"):
            lib.zeros(2, size=(2,))


@pytest.mark.parity
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["int32", "float64", "int64"])
def test_cumsum_cumprod_dtype(name, dtype):
    torch = pytest.importorskip("torch")
    values = np.array([[1.5, 2.0, -3.0], [0.5, 4.0, 1.0]])
    for dim in (0, 1):
        theirs = getattr(torch, name)(torch.tensor(values), dim, dtype=getattr(torch, dtype))
        ours = getattr(tl, name)(tl.tensor(values), dim, dtype=getattr(tl, dtype))
        method = getattr(tl.tensor(values), name)(dim, dtype=getattr(tl, dtype))
        for result in (ours, method):
            assert str(result.dtype).split(".")[-1] == dtype
            np.testing.assert_allclose(result.numpy(), theirs.numpy())


@pytest.mark.parity
@pytest.mark.parametrize("mode", [None, "floor", "trunc"])
def test_div_rounding_mode(mode):
    torch = pytest.importorskip("torch")
    for a, b in (([7, -7, 5], 2), ([7.5, -7.5, 1.0], [2.0, 2.0, -0.5]), ([7, -7, 3], [2, 2, -2])):
        theirs = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode=mode)
        ours = tl.div(tl.tensor(a), tl.tensor(b), rounding_mode=mode)
        method = tl.tensor(a).div(tl.tensor(b), rounding_mode=mode)
        for result in (ours, method):
            assert str(result.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
            np.testing.assert_allclose(result.numpy(), theirs.numpy())
    floored = tl.tensor([7.0, -7.0])
    floored.div_(2, rounding_mode=mode)
    expected = torch.tensor([7.0, -7.0]).div_(2, rounding_mode=mode)
    np.testing.assert_allclose(floored.numpy(), expected.numpy())
    with pytest.raises(RuntimeError, match="rounding_mode"):
        tl.div(tl.ones(2), 2, rounding_mode="round")


@pytest.mark.parity
def test_device_flags_and_layout():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        x = lib.ones(2)
        assert (x.is_xpu, x.is_mps, x.is_meta, x.is_cuda) == (False,) * 4
        assert x.layout is lib.strided
    assert repr(tl.strided) == "tensorlib.strided" and isinstance(tl.strided, tl.layout)


@pytest.mark.parity
@pytest.mark.parametrize(
    "name", ["complex64", "complex128", "cfloat", "cdouble", "uint16", "uint32", "uint64"]
)
def test_missing_dtypes_answer_queries_and_refuse_use(name):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(tl, name), getattr(torch, name)
    assert ours.is_floating_point == theirs.is_floating_point
    assert ours.is_complex == theirs.is_complex
    assert ours.is_signed == theirs.is_signed
    assert ours.itemsize == theirs.itemsize
    for use in (
        lambda: tl.zeros(2, dtype=ours),
        lambda: tl.tensor([1, 2], dtype=ours),
        lambda: tl.ones(2).to(ours),
    ):
        with pytest.raises(TypeError, match=f"tensorlib has no {ours.name}"):
            use()
    assert tl.cfloat is tl.complex64 and tl.cdouble is tl.complex128


@pytest.mark.parity
def test_retain_grad_follows_the_new_value_and_hooks_the_old_as_in_pytorch():
    torch = pytest.importorskip("torch")
    seen = {}
    for lib in (tl, torch):
        w = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = w * 2
        h.retain_grad()
        h.register_hook(lambda g, lib=lib: seen.__setitem__(lib.__name__, g.numpy().copy()))
        h *= 3
        (h * h).sum().backward()
        seen[lib.__name__ + " grad"] = h.grad.numpy().copy()
    np.testing.assert_allclose(seen["tensorlib"], seen["torch"])
    np.testing.assert_allclose(seen["tensorlib grad"], seen["torch grad"])


@pytest.mark.parity
@pytest.mark.parametrize(
    "write",
    [
        lambda buf, w: buf.__setitem__(0, (w * w).sum()),
        lambda buf, w: buf.copy_(w * 3),
        lambda buf, w: buf.fill_((w * w).sum()),
        lambda buf, w: buf.add_(w),
        lambda buf, w: buf.mul_(w),
    ],
    ids=["setitem", "copy_", "fill_", "add_", "mul_"],
)
def test_writing_a_value_that_requires_grad_into_a_plain_tensor_is_recorded(write):
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (tl, torch):
        buf = lib.arange(1.0, 4.0, dtype=lib.float64)
        w = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        write(buf, w)
        assert buf.requires_grad and not buf.is_leaf
        (buf * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_an_integer_tensor_never_joins_the_graph():
    w = tl.tensor([1.5, 2.5], requires_grad=True)
    writes = [
        lambda b: b.__setitem__(0, w[0]),
        lambda b: b.copy_(w),
        lambda b: b.index_add_(0, tl.tensor([0, 1]), w),
        lambda b: b.fill_(w[0]),
    ]
    for write in writes:
        counts = tl.zeros(2, dtype=tl.int64)
        with pytest.raises(RuntimeError, match="drop its gradient|can't be cast"):
            write(counts)
        assert not counts.requires_grad and counts.tolist() == [0, 0]


@pytest.mark.parity
@pytest.mark.parametrize("name", ["ReLU", "LeakyReLU", "ELU", "Hardtanh", "ReLU6", "SiLU"])
def test_inplace_activation_layers_on_a_non_leaf_match_pytorch(name):
    torch = pytest.importorskip("torch")
    a, weight = _arrays([(3, 4), (5, 4)], 5)
    grads = []
    for lib in (tl, torch):
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        w = lib.tensor(weight, dtype=lib.float64, requires_grad=True)
        h = getattr(lib.nn, name)(inplace=True)(x @ w.T) * 2
        (h * h).sum().backward()
        grads.append((x.grad.numpy(), w.grad.numpy()))
    for mine, reference in zip(*grads, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-10, atol=1e-12)


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.parity
@pytest.mark.parametrize("target", DTYPES)
@pytest.mark.parametrize("source", DTYPES)
def test_in_place_ops_cast_by_pytorchs_rule(source, target):
    """PyTorch's canCast for every pair of dtypes (review 7): a result is refused only when it is
    a float going into an integer or bool tensor, or an integer going into a bool one; int64 into
    uint8 wraps around. ``add_``, ``mul_``, ``sub_``, ``clamp_`` with tensor bounds... here
    ``add_``, ``mul_``, ``copy_`` and ``remainder_`` (an ``apply_`` op)."""
    torch = pytest.importorskip("torch")
    values = np.array([1, 0, 3, 100], dtype=source)

    def outcome(module, op):
        tensor = module.tensor(np.array([2, 1, 0, 7]), dtype=getattr(module, target))
        other = module.tensor(values.copy(), dtype=getattr(module, source))
        try:
            getattr(tensor, op)(other)
        except RuntimeError:
            return "refused"
        return tensor.tolist()

    for op in ("add_", "mul_", "copy_"):
        assert outcome(tl, op) == outcome(torch, op), op
    if "bool" not in (source, target) and "float16" not in (source, target):
        nonzero = np.array([1, 2, 3, 100], dtype=source)
        values[:] = nonzero
        assert outcome(tl, "remainder_") == outcome(torch, "remainder_")


# the in-place ops' cast refusal in PyTorch's words and dtype names (the review's 7)
_CAST_REFUSALS = {
    "bool.add_(1)": lambda lib: lib.tensor([True]).add_(1),
    "int32.exp_()": lambda lib: lib.tensor([1], dtype=lib.int32).exp_(),
    "int64.mul_(1.5)": lambda lib: lib.tensor([1]).mul_(1.5),
    "int64 += 0.5": lambda lib: lib.tensor([1]).__iadd__(0.5),
    "uint8.div_(2)": lambda lib: lib.tensor([4], dtype=lib.uint8).div_(2),
    "int64.clamp_(0.5)": lambda lib: lib.tensor([1]).clamp_(0.5),
    "bool.clamp_(2)": lambda lib: lib.tensor([True]).clamp_(2),
    "int64.clamp_(max=tensor)": lambda lib: lib.tensor([1]).clamp_(max=lib.tensor(0.5)),
    "int16.sigmoid_()": lambda lib: lib.tensor([1], dtype=lib.int16).sigmoid_(),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(_CAST_REFUSALS))
def test_in_place_cast_refusals_match_pytorchs_message(case):
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (torch, tl):
        with pytest.raises(RuntimeError) as refused:
            _CAST_REFUSALS[case](lib)
        messages.append(str(refused.value))
    assert messages[1] == messages[0]
