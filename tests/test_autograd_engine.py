"""Engine behaviour of chapter 2: creation, attributes, graph bookkeeping, dtype rules, errors.

The gradients of the individual ops are checked in test_autograd_ops.py (gradcheck) and
test_parity_autograd.py (PyTorch); this file checks what the engine does around them:
accumulation, no_grad, detach, leaves and non-leaves, deep graphs, dtypes and error messages.
"""

from __future__ import annotations

import re
import sys
import warnings

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F

SHAPE_ERRORS = (ValueError, RuntimeError, TypeError)


def names_shape(message: str, shape: tuple[int, ...]) -> bool:
    """Whether ``message`` spells ``shape`` as (2, 3), [2, 3], 2x3 or 2 x 3."""
    parts = [str(s) for s in shape]
    patterns = [
        r"\(\s*" + r",\s*".join(parts) + r",?\s*\)",
        r"\[\s*" + r",\s*".join(parts) + r"\s*\]",
        r"\b" + r"\s*x\s*".join(parts) + r"\b",
    ]
    return any(re.search(p, message) for p in patterns)


# ---------------------------------------------------------------------------------------------
# creation and attributes
# ---------------------------------------------------------------------------------------------


def test_tensor_default_dtypes_follow_torch():
    assert tl.tensor([1.0, 2.0]).dtype == np.float32
    assert tl.tensor([1, 2]).dtype == np.int64
    assert tl.tensor([True, False]).dtype == np.bool_
    assert tl.tensor(np.ones(2, dtype=np.float64)).dtype == np.float64, (
        "a float64 array stays float64"
    )
    assert tl.tensor([1, 2], dtype=tl.float64).dtype == np.float64
    assert tl.float32 == np.float32 and tl.float64 == np.float64 and tl.int64 == np.int64


def test_creation_functions():
    assert tl.zeros(2, 3).shape == (2, 3) and tl.zeros(2, 3).dtype == np.float32
    assert tl.zeros((2, 3)).shape == (2, 3), "zeros takes a size tuple too"
    np.testing.assert_array_equal(tl.ones(3).numpy(), np.ones(3, dtype=np.float32))
    full = tl.full((2, 2), 7.5)
    np.testing.assert_array_equal(full.numpy(), np.full((2, 2), 7.5))
    assert full.dtype == np.float32
    assert tl.arange(5).dtype == np.int64, "arange of ints is int64, like torch"
    np.testing.assert_array_equal(tl.arange(5).numpy(), np.arange(5))
    np.testing.assert_allclose(tl.arange(0, 1, 0.25).numpy(), [0, 0.25, 0.5, 0.75])
    assert tl.arange(0, 1, 0.25).dtype == np.float32
    x = tl.tensor(np.ones((2, 3)))
    assert tl.zeros_like(x).shape == (2, 3) and tl.zeros_like(x).dtype == np.float64
    np.testing.assert_array_equal(tl.ones_like(x).numpy(), np.ones((2, 3)))
    assert tl.zeros(2, dtype=tl.float64).dtype == np.float64
    assert tl.ones(2, requires_grad=True).requires_grad


def test_from_numpy_keeps_dtype_and_shares_memory():
    array = np.arange(6.0).reshape(2, 3)
    t = tl.from_numpy(array)
    assert t.dtype == np.float64 and t.shape == (2, 3)
    array[0, 0] = 42.0
    assert t.numpy()[0, 0] == 42.0, "from_numpy shares memory with the array, like torch.from_numpy"


def test_attributes():
    x = tl.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert x.shape == (2, 3) and isinstance(x.shape, tuple)
    assert x.ndim == 2
    assert isinstance(x.data, tl.Tensor) and isinstance(x.numpy(), np.ndarray)
    assert x.T.shape == (3, 2)
    np.testing.assert_array_equal(x.T.numpy(), np.arange(6.0).reshape(2, 3).T)
    assert x.grad is None and x.requires_grad and x.is_leaf and x.grad_fn is None
    s = x.sum()
    assert isinstance(s.item(), float) and s.item() == 15.0
    assert isinstance(tl.tensor([3]).item(), int)


def test_repr_is_readable():
    text = repr(tl.tensor([1.5, -2.0], requires_grad=True))
    assert text.startswith("tensor("), f"expected a torch-like repr, got {text!r}"
    assert "1.5" in text and "-2" in text and "requires_grad=True" in text
    assert "0x" not in text, f"a repr must not show memory addresses: {text!r}"
    assert "requires_grad" not in repr(tl.tensor([1.0]))


def test_to_float_double():
    x = tl.tensor([1.0, 2.0])
    assert x.double().dtype == np.float64
    assert x.double().float().dtype == np.float32
    assert x.to(tl.float64).dtype == np.float64
    assert x.to(np.float64).dtype == np.float64


def test_conversions_are_differentiable_and_grad_keeps_the_leaf_dtype():
    x = tl.tensor(np.array([1.0, 2.0]), requires_grad=True)  # float64 leaf
    (x.float() * 3.0).sum().backward()
    assert x.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


# ---------------------------------------------------------------------------------------------
# graph bookkeeping
# ---------------------------------------------------------------------------------------------


def test_leaf_and_non_leaf():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    c = tl.tensor([3.0, 4.0])
    y = x * c
    assert not y.is_leaf and y.requires_grad and y.grad_fn is not None
    z = c * 2.0
    assert z.is_leaf and not z.requires_grad and z.grad_fn is None, (
        "no input requires grad: no graph"
    )


def test_requires_grad_underscore():
    x = tl.tensor([1.0, 2.0])
    assert x.requires_grad_() is x and x.requires_grad
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    x.requires_grad_(False)
    assert not x.requires_grad


def test_node_used_twice_accumulates():
    x = tl.tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True)
    y = x * x  # y used twice below: d(y + y*y)/dx = 2x + 4x^3
    z = y + y * y
    z.sum().backward()
    data = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), 2 * data + 4 * data**3)


def test_diamond_graph():
    x = tl.tensor(2.0, requires_grad=True)
    a = x * 3.0
    b = x.exp()
    (a * b).backward()  # d(3x e^x)/dx = 3 e^x (1 + x)
    assert abs(x.grad.item() - 3 * np.exp(2.0) * 3.0) < 1e-4


def test_same_input_twice_in_one_op():
    x = tl.tensor(np.array([1.5, -0.5]), requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, -1.0])
    x.grad = None
    (x @ x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, -1.0])


def test_grads_accumulate_across_backward_calls_until_zeroed():
    x = tl.tensor(np.array([1.0, 2.0]), requires_grad=True)
    for expected in ([2.0, 4.0], [4.0, 8.0], [6.0, 12.0]):
        (x * x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), expected, err_msg="gradients must accumulate")
    x.grad = None
    (x * 5.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])


def test_non_leaf_grad_stays_none():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns when .grad of a non-leaf is read
        assert y.grad is None, "only leaves keep .grad"
    assert x.grad is not None


def test_backward_with_explicit_gradient():
    x = tl.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    y = x * x
    y.backward(gradient=tl.tensor(np.array([[1.0, 0.0], [0.5, 2.0]])))
    np.testing.assert_allclose(x.grad.numpy(), [[2.0, 0.0], [3.0, 16.0]])


def test_backward_on_scalar_uses_one():
    x = tl.tensor(np.array([1.0, 2.0]), requires_grad=True)
    (x * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_deep_chain_backpropagates_without_recursion():
    n = 100_000
    x = tl.tensor(np.array([0.5, -1.0]), requires_grad=True)
    y = x
    for i in range(n):
        y = y * 1.0 if i % 2 else y + 0.001
    y.sum().backward()
    np.testing.assert_allclose(y.numpy(), np.array([0.5, -1.0]) + 0.001 * n / 2)
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    assert n > sys.getrecursionlimit(), "the chain must be deeper than the recursion limit"


def test_wide_fan_out_accumulates():
    x = tl.tensor(np.array([1.0]), requires_grad=True)
    total = x * 0.0
    for _ in range(1000):
        total = total + x
    total.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1000.0])


# ---------------------------------------------------------------------------------------------
# no_grad and detach
# ---------------------------------------------------------------------------------------------


def test_no_grad_builds_no_graph_and_restores():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    with tl.no_grad():
        y = x * 2.0
        with tl.no_grad():
            w = x + 1.0
        v = x.exp()
    assert not y.requires_grad and y.grad_fn is None
    assert not w.requires_grad and not v.requires_grad, (
        "leaving an inner no_grad must keep the outer one"
    )
    z = x * 2.0
    assert z.requires_grad and z.grad_fn is not None, "grad mode must be restored after the block"


def test_no_grad_restores_after_an_exception():
    x = tl.tensor([1.0], requires_grad=True)
    with pytest.raises(KeyError):
        with tl.no_grad():
            raise KeyError("boom")
    assert (x * 2.0).requires_grad


def test_no_grad_as_decorator():
    @tl.no_grad()
    def double(t):
        return t * 2.0

    assert not double(tl.tensor([1.0], requires_grad=True)).requires_grad


def test_detach():
    x = tl.tensor(np.array([1.0, 2.0]), requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    np.testing.assert_array_equal(d.numpy(), x.numpy())
    (x * x.detach()).sum().backward()
    np.testing.assert_array_equal(
        x.grad.numpy(), [1.0, 2.0], err_msg="no gradient flows through detach"
    )


# ---------------------------------------------------------------------------------------------
# dtype rules
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_python_scalars_do_not_upcast(dtype):
    x = tl.tensor(np.ones((2, 2), dtype=dtype), requires_grad=True)
    for y in (x * 2.0, 2.0 * x, x + 1, x - 0.5, 1.0 - x, x / 3.0, 3.0 / x, x**2.0, 2.0**x, -x):
        assert y.dtype == dtype, f"{np.dtype(dtype).name} op with a Python scalar gave {y.dtype}"
    out = ((x * 2.0).exp().sum(dim=0) / 3.0).mean()
    assert out.dtype == dtype
    out.backward()
    assert x.grad.dtype == dtype, f"grad of a {np.dtype(dtype).name} leaf came as {x.grad.dtype}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_scalars_do_not_upcast_either(dtype):
    # x / np.sqrt(d) is the usual attention scaling: numpy scalars are scalars to torch too
    x = tl.tensor(np.ones((2, 2), dtype=dtype), requires_grad=True)
    for scalar in (np.float64(2.0), np.sqrt(4.0), np.int64(2), np.float32(2.0)):
        for y in (x * scalar, x / scalar, x + scalar, scalar * x, scalar - x):
            assert y.dtype == dtype, (
                f"{np.dtype(dtype).name} op with {type(scalar).__name__} gave {y.dtype}"
            )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ops_keep_the_float_dtype(dtype):
    x = tl.tensor(np.full((2, 3), 0.5, dtype=dtype), requires_grad=True)
    outs = [
        x.exp(), x.log(), x.sqrt(), x.tanh(), x.sigmoid(), x.relu(), F.gelu(x), F.silu(x),
        F.gelu(x, approximate="tanh"), x.mean(), x.var(dim=1), x.softmax(dim=1),
        x.log_softmax(dim=1), x @ x.T, x.max(dim=1)[0],
        F.cross_entropy(x, tl.tensor([0, 2])), F.mse_loss(x, x * 0.5),
        F.binary_cross_entropy_with_logits(x, x * 0.0),
    ]
    for i, y in enumerate(outs):
        assert y.dtype == dtype, f"op #{i}: {np.dtype(dtype).name} input gave {y.dtype}"


def test_mixed_float_tensors_promote_to_float64():
    a = tl.tensor(np.ones(2, dtype=np.float32), requires_grad=True)
    b = tl.tensor(np.ones(2, dtype=np.float64), requires_grad=True)
    c = a * b
    assert c.dtype == np.float64
    c.sum().backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64, (
        "each grad has its leaf's dtype"
    )


def test_integer_tensors_and_scalars():
    i = tl.tensor([1, 2, 3])
    assert (i + 1).dtype == np.int64
    assert (i * 2.0).dtype == np.float32, "int tensor times a Python float is float32, like torch"


def test_integer_tensor_with_float32_tensor_stays_float32():
    # torch promotes across categories to the float operand's dtype: int64 + float32 is float32
    # (numpy would give float64), so x + positions does not silently double the memory
    x = tl.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    positions = tl.arange(3)
    for y in (x + positions, positions + x, x * positions, positions / (x + 1.0)):
        assert y.dtype == np.float32, f"float32 with int64 tensor: expected float32, got {y.dtype}"


def test_integer_tensors_index():
    x = tl.arange(10)
    np.testing.assert_array_equal(x[tl.tensor([3, 1, 3])].numpy(), [3, 1, 3])
    values, indices = tl.tensor([[1.0, 5.0, 2.0]]).max(dim=1)
    np.testing.assert_array_equal(tl.tensor([[10.0, 20.0, 30.0]])[0][indices].numpy(), [20.0])


def test_dim_and_axis_keepdim_and_keepdims_are_aliases():
    data = np.arange(24.0).reshape(2, 3, 4)
    x = tl.tensor(data)
    np.testing.assert_array_equal(x.sum(axis=1).numpy(), x.sum(dim=1).numpy())
    np.testing.assert_array_equal(
        x.mean(axis=-1, keepdims=True).numpy(), data.mean(axis=-1, keepdims=True)
    )
    assert x.sum(dim=1, keepdim=True).shape == (2, 1, 4)
    assert x.max(axis=2)[0].shape == (2, 3)
    np.testing.assert_allclose(x.var(axis=0).numpy(), data.var(axis=0, ddof=1))


def test_max_with_dim_returns_values_and_indices():
    x = tl.tensor(np.array([[1.0, 7.0, 3.0], [9.0, 2.0, 4.0]]))
    result = x.max(dim=1)
    values, indices = result
    np.testing.assert_array_equal(values.numpy(), [7.0, 9.0])
    np.testing.assert_array_equal(indices.numpy(), [1, 0])
    assert indices.dtype == np.int64
    v, i = x.min(dim=0, keepdim=True)
    assert v.shape == (1, 3) and i.shape == (1, 3)
    np.testing.assert_array_equal(i.numpy(), [[0, 1, 0]])
    assert x.max().shape == () and x.max().item() == 9.0


def test_max_with_dim_result_has_values_and_indices_fields():
    result = tl.tensor(np.array([[1.0, 7.0, 3.0], [9.0, 2.0, 4.0]])).max(dim=1)
    np.testing.assert_array_equal(result.values.numpy(), [7.0, 9.0])
    np.testing.assert_array_equal(result.indices.numpy(), [1, 0])


# ---------------------------------------------------------------------------------------------
# error messages
# ---------------------------------------------------------------------------------------------


def test_matmul_shape_mismatch_names_both_shapes():
    a, b = tl.ones(2, 3), tl.ones(4, 5)
    with pytest.raises(SHAPE_ERRORS) as info:
        a @ b
    message = str(info.value)
    assert names_shape(message, (2, 3)) and names_shape(message, (4, 5)), message


def test_batched_matmul_mismatch_names_both_shapes():
    with pytest.raises(SHAPE_ERRORS) as info:
        tl.ones(2, 2, 3) @ tl.ones(3, 4, 5)
    message = str(info.value)
    assert names_shape(message, (2, 2, 3)) and names_shape(message, (3, 4, 5)), message


def test_matmul_of_mixed_dtypes_raises_like_torch():
    a = tl.ones(2, 3)
    b = tl.ones(3, 2, dtype=tl.float64)
    with pytest.raises(TypeError, match=r"same dtype, got float32 and float64"):
        a @ b
    with pytest.raises(TypeError, match=r"same dtype, got float64 and int64"):
        tl.matmul(b, tl.ones(2, 2, dtype=tl.int64))


def test_broadcast_error_names_both_shapes():
    with pytest.raises(SHAPE_ERRORS) as info:
        tl.ones(2, 3) + tl.ones(4, 3)
    message = str(info.value)
    assert names_shape(message, (2, 3)) and names_shape(message, (4, 3)), message


def test_backward_on_non_scalar_without_gradient():
    y = tl.ones(2, 3, requires_grad=True) * 2.0
    with pytest.raises((RuntimeError, ValueError)) as info:
        y.backward()
    message = str(info.value)
    assert re.search(r"scalar", message, re.I), message
    assert names_shape(message, (2, 3)), f"the message should say which shape came: {message}"


def test_backward_gradient_of_wrong_shape():
    y = tl.ones(2, 3, requires_grad=True) * 2.0
    with pytest.raises(SHAPE_ERRORS) as info:
        y.backward(gradient=tl.ones(3, 2))
    message = str(info.value)
    assert names_shape(message, (2, 3)) and names_shape(message, (3, 2)), message


def test_backward_on_tensor_that_does_not_require_grad():
    with pytest.raises(RuntimeError, match=r"(?i)requires?[_ ]grad"):
        tl.ones(2, 3).sum().backward()
    with pytest.raises(RuntimeError, match=r"(?i)requires?[_ ]grad"):
        with tl.no_grad():
            y = (tl.ones(2, requires_grad=True) * 2.0).sum()
        y.backward()


def test_bad_dim_names_the_dim_and_the_rank():
    with pytest.raises((IndexError, ValueError)) as info:
        tl.ones(2, 3).sum(dim=2)
    assert "2" in str(info.value)


def test_view_of_wrong_size_names_shapes():
    with pytest.raises(SHAPE_ERRORS) as info:
        tl.ones(2, 3).reshape(4, 2)
    message = str(info.value)
    assert names_shape(message, (2, 3)) or names_shape(message, (4, 2)), message


def test_failed_backward_leaves_grads_unchanged():
    x = tl.tensor(np.array([1.0, 2.0]), requires_grad=True)
    (x * 3.0).sum().backward()
    y = x * x
    with pytest.raises(SHAPE_ERRORS):
        y.backward(gradient=tl.ones(3))
    np.testing.assert_array_equal(
        x.grad.numpy(), [3.0, 3.0], err_msg="a failed backward must not touch .grad"
    )


def test_grad_is_a_plain_tensor():
    x = tl.tensor(np.array([1.0, 2.0]), requires_grad=True)
    (x * x).sum().backward()
    assert isinstance(x.grad, tl.Tensor)
    assert not x.grad.requires_grad and x.grad.grad_fn is None
    assert x.grad.shape == x.shape


def test_index_out_of_range_names_index_and_size():
    x = tl.ones(3, 4)
    with pytest.raises(IndexError) as info:
        x[5]
    assert "5" in str(info.value) and "3" in str(info.value), str(info.value)
    with pytest.raises(IndexError) as info:
        x[tl.tensor([0, 7])]
    assert "7" in str(info.value), str(info.value)


def test_cat_of_mismatched_shapes_names_them():
    with pytest.raises(SHAPE_ERRORS) as info:
        tl.cat([tl.ones(2, 3), tl.ones(2, 4)], dim=0)
    message = str(info.value)
    assert names_shape(message, (2, 3)) and names_shape(message, (2, 4)), message


def test_cross_entropy_target_out_of_range_names_it():
    logits = tl.ones(4, 3, requires_grad=True)
    with pytest.raises((IndexError, ValueError)) as info:
        F.cross_entropy(logits, tl.tensor([0, 5, 1, 2]))
    message = str(info.value)
    assert "5" in message and "3" in message, (
        f"should name the bad target 5 and the 3 classes: {message}"
    )


def test_cross_entropy_batch_mismatch_names_shapes():
    with pytest.raises(SHAPE_ERRORS) as info:
        F.cross_entropy(tl.ones(4, 3), tl.tensor([0, 1, 2]))
    message = str(info.value)
    assert "4" in message and "3" in message, message


def test_integer_tensors_cannot_require_grad():
    with pytest.raises((RuntimeError, TypeError, ValueError), match=r"(?i)float"):
        tl.tensor([1, 2, 3], requires_grad=True)


# ---------------------------------------------------------------------------------------------
# round 2 regressions (code review): silently wrong gradients
# ---------------------------------------------------------------------------------------------


def _in_place_ops():
    return {
        "setitem": lambda t: t.__setitem__(0, 5.0),
        "zero_": lambda t: t.zero_(),
        "fill_": lambda t: t.fill_(2.0),
        "copy_": lambda t: t.copy_(tl.ones(3)),
        "add_": lambda t: t.add_(1.0),
        "sub_": lambda t: t.sub_(tl.ones(3), alpha=2),
        "mul_": lambda t: t.mul_(2.0),
        "div_": lambda t: t.div_(2.0),
        "clamp_": lambda t: t.clamp_(min=0.5),
        "+=": lambda t: t.__iadd__(1.0),
    }


@pytest.mark.parametrize("op", list(_in_place_ops()))
def test_every_in_place_op_raises_the_version(op):
    t = tl.tensor([1.0, 2.0, 3.0])
    assert t._version == 0
    _in_place_ops()[op](t)
    assert t._version == 1, f"{op} did not raise the version"
    _in_place_ops()[op](t)
    assert t._version == 2


@pytest.mark.parametrize("op", list(_in_place_ops()))
def test_saved_input_changed_in_place_makes_backward_raise(op):
    x = tl.tensor([1.0, 2.0, 3.0])
    w = tl.ones(3, requires_grad=True)
    y = (w * x).sum()
    _in_place_ops()[op](x)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
        y.backward()
    message = str(info.value)
    assert "MulBackward" in message and names_shape(message, (3,)) and "version" in message, message
    assert w.grad is None, "nothing may be accumulated before the error"


def test_parameter_changed_under_no_grad_before_backward_raises_only_if_read():
    p = tl.nn.Parameter(tl.ones(3))
    loss = (p * p).sum()  # the gradient of p reads p
    with tl.no_grad():
        p.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    # p's gradient reads only the constant, so changing p is harmless here, as in torch
    q = tl.nn.Parameter(tl.ones(3))
    loss = (q * tl.tensor([1.0, 2.0, 3.0])).sum()
    with tl.no_grad():
        q.add_(1.0)
    loss.backward()
    np.testing.assert_array_equal(q.grad.numpy(), [1.0, 2.0, 3.0])


def test_detached_alias_shares_the_version_counter():
    w = tl.ones(3, requires_grad=True)
    y = (w * w).sum()
    w.detach().zero_()  # same memory as w
    assert w._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_in_place_change_of_an_unsaved_input_is_fine():
    x = tl.tensor([1.0, 2.0, 3.0])
    w = tl.ones(3, requires_grad=True)
    y = (w + x).sum() + w.reshape(3, 1).sum()  # Add and Reshape save no input values, as in torch
    x.add_(1.0)
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0, 2.0])


def test_in_place_change_before_the_op_is_fine_and_a_new_graph_works():
    x = tl.tensor([1.0, 2.0, 3.0])
    x.add_(1.0)
    w = tl.ones(3, requires_grad=True)
    (w * x).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 3.0, 4.0])


def test_failed_in_place_op_leaves_the_version_alone():
    t = tl.tensor([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        t.copy_(tl.ones(4))
    with pytest.raises(ValueError):
        t.mul_(tl.ones(2))
    assert t._version == 0


def test_custom_function_returning_a_gradient_of_the_wrong_shape_raises():
    class Bad(tl.Function):
        def forward(self, x):
            return x * 2

        def backward(self, grad):
            return grad.sum(keepdims=True)  # shape (1,) for an input of shape (3,)

    w = tl.ones(3, requires_grad=True)
    with pytest.raises(
        RuntimeError, match=r"BadBackward returned an invalid gradient at index 0"
    ) as info:
        Bad.apply(w).sum().backward()
    message = str(info.value)
    assert names_shape(message, (1,)) and names_shape(message, (3,)), message
    a = tl.ones(2, 3, requires_grad=True)  # the same check for a non-leaf input
    with pytest.raises(RuntimeError, match="invalid gradient"):
        Bad.apply(a * 1.0).sum().backward()


def test_custom_function_may_return_a_numpy_scalar_for_a_0d_input():
    class Square(tl.Function):
        def forward(self, x):
            self.x = x
            return x * x

        def backward(self, grad):
            return np.float64(2.0) * self.x * grad  # a numpy scalar, not an array

    x = tl.tensor(3.0, dtype=tl.float64, requires_grad=True)
    (Square.apply(x) * 1.0).backward()
    assert x.grad.item() == 6.0


@pytest.mark.parametrize(
    ("write", "expected"),
    [
        (lambda buf, w: buf.__setitem__(0, (w * w).sum()), [2.0, 2.0, 2.0]),
        (lambda buf, w: buf.copy_(w * 3), [3.0, 3.0, 3.0]),
        (lambda buf, w: buf.fill_((w * w).sum()), [6.0, 6.0, 6.0]),
        (lambda buf, w: buf.add_(w), [1.0, 1.0, 1.0]),
        (lambda buf, w: buf.mul_(w), [0.0, 0.0, 0.0]),
    ],
    ids=["setitem", "copy_", "fill_", "add_", "mul_"],
)
def test_writing_a_tensor_that_requires_grad_in_place_is_recorded(write, expected):
    # as in PyTorch, the plain tensor joins the graph and the gradient flows back to w
    buf, w = tl.zeros(3), tl.ones(3, requires_grad=True)
    write(buf, w)
    buf.sum().backward()
    assert w.grad.tolist() == expected
    with tl.no_grad():  # outside grad mode the values are simply copied
        plain = tl.zeros(3)
        write(plain, w)
        assert plain.grad_fn is None


# ---------------------------------------------------------------------------------------------
# round 2 regressions: wrong results, crashes, API
# ---------------------------------------------------------------------------------------------


def test_mse_loss_refuses_to_broadcast_input_against_target():
    with pytest.raises(ValueError, match="same shape") as info:
        F.mse_loss(tl.zeros(4, 1), tl.arange(4).float())
    assert names_shape(str(info.value), (4, 1)) and names_shape(str(info.value), (4,))


@pytest.mark.parametrize(
    ("make", "error", "pattern"),
    [
        (lambda: tl.zeros(2.5), TypeError, "ints"),
        (lambda: tl.zeros(-1), ValueError, "negative"),
        (lambda: tl.zeros("a"), TypeError, "ints"),
        (lambda: tl.ones(2, 2.0), TypeError, "ints"),
        (lambda: tl.full(2.5, 1.0), TypeError, "ints"),
        (lambda: tl.empty((2, -3)), ValueError, "negative"),
        (lambda: tl.ones(4).reshape(2.5, 2), TypeError, "ints"),
        (lambda: tl.ones(4).view(2, "a"), TypeError, "ints"),
        (lambda: tl.ones(1, 3).expand(2.0, 3), TypeError, "ints"),
        (lambda: tl.ones(4).reshape(-2, 2), ValueError, "negative"),
    ],
)
def test_sizes_are_validated_not_truncated(make, error, pattern):
    with pytest.raises(error, match=pattern):
        make()


def test_sizes_in_every_accepted_form():
    assert tl.zeros(2, 3).shape == tl.zeros((2, 3)).shape == tl.zeros([2, 3]).shape == (2, 3)
    assert tl.zeros(np.int64(2)).shape == (2,) and tl.zeros(()).shape == ()
    assert tl.full((2, 2), 1.5).shape == (2, 2) and tl.full(3, 1).shape == (3,)
    x = tl.ones(6)
    assert (
        x.reshape(-1, 2).shape == (3, 2)
        and x.view((3, -1)).shape == (3, 2)
        and x.reshape([2, 3]).shape == (2, 3)
    )
    assert tl.ones(1, 3).expand(2, -1).shape == (2, 3)
    assert tl.ones(2, 3, 4).permute(-1, 0, 1).shape == (4, 2, 3)


def test_where_of_two_numbers_is_float32():
    out = tl.where(tl.tensor([True, False]), 1.0, 0.0)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.numpy(), [1.0, 0.0])


def test_var_backward_over_one_element_is_nan_not_an_exception():
    x = tl.ones(1, 3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.var(dim=0).sum().backward()
    assert np.isnan(x.grad.numpy()).all()


def test_device_api():
    t = tl.ones(2)
    assert (
        t.device.type == "cpu"
        and str(t.device) == "cpu"
        and t.device == "cpu"
        and t.device == tl.device("cpu")
    )
    assert repr(t.device) == "device(type='cpu')"
    assert (
        t.cpu() is t
        and t.to("cpu") is t
        and t.to(tl.device("cpu")) is t
        and t.to(device="cpu") is t
    )
    assert (
        t.to("cpu", tl.float64).dtype == np.float64 and t.to(dtype=tl.float64).dtype == np.float64
    )
    assert (
        t.to(tl.float64).dtype == np.float64
        and t.to(tl.zeros(1, dtype=tl.float64)).dtype == np.float64
    )
    for make in (tl.zeros, tl.ones, tl.empty):
        assert make(2, device="cpu").shape == (2,) and make(2, device=None).shape == (2,)
    for make in (
        lambda d: tl.tensor([1.0], device=d),
        lambda d: tl.full((2,), 1.0, device=d),
        lambda d: tl.arange(3, device=d),
        lambda d: tl.linspace(0, 1, 3, device=d),
        lambda d: tl.eye(2, device=d),
        lambda d: tl.zeros_like(t, device=d),
        lambda d: t.to(d),
        lambda d: t.to(device=d),
    ):
        make(tl.device("cpu"))
        with pytest.raises(ValueError, match="tensorlib runs on the CPU only, got device 'cuda'"):
            make("cuda")
    assert tl.as_device(None) == tl.device("cpu") and tl.as_device("cpu:0").type == "cpu"
    # another device can be named (a default argument at import), not used
    cuda = tl.device("cuda:0")
    assert (str(cuda), cuda.index, cuda == "cuda:0", cuda == "cuda:1") == ("cuda:0", 0, True, False)
    with pytest.raises(ValueError, match="CPU only, got device 'cuda:0'"):
        tl.zeros(2, device=cuda)
    with pytest.raises(RuntimeError, match="device type at start of device string: gpu"):
        tl.device("gpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        tl.device("cuda:x")
    with pytest.raises(TypeError, match="device must be"):
        tl.as_device(0)


@pytest.mark.parity
@pytest.mark.parametrize("args", [("cuda:0", 1), ("cpu:0", 0), ("cpu", "0"), ("cpu", True)])
def test_device_refuses_an_index_twice_or_of_another_type_as_pytorch(args):
    torch = pytest.importorskip("torch")
    with pytest.raises((RuntimeError, TypeError)) as theirs:
        torch.device(*args)
    with pytest.raises(theirs.type) as ours:
        tl.device(*args)
    assert str(ours.value) == str(theirs.value)


def test_tensor_constructor_refuses_sizes_and_keeps_the_dtype():
    with pytest.raises(TypeError, match=r"tensorlib.empty|tensorlib.zeros"):
        tl.Tensor(2, 3)
    assert tl.Tensor(np.ones(2)).dtype == np.float64 and tl.Tensor([1.0]).dtype == np.float32


def test_aliases_comparisons_and_reductions_to_bool():
    assert tl.float == np.float32 and tl.int == np.int32 and tl.half == np.float16
    t = tl.tensor([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(t.lt(2).numpy(), [True, False, False])
    np.testing.assert_array_equal(t.le(2).numpy(), [True, True, False])
    np.testing.assert_array_equal(t.gt(2).numpy(), [False, False, True])
    np.testing.assert_array_equal(t.ge(2).numpy(), [False, True, True])
    np.testing.assert_array_equal(t.ne(2).numpy(), [True, False, True])
    assert (
        t.gt(0).all().item() is True
        and t.gt(2).any().item() is True
        and t.gt(5).any().item() is False
    )
    np.testing.assert_array_equal(
        tl.tensor([[True, False], [True, True]]).all(dim=1).numpy(), [False, True]
    )
    assert tl.allclose(t, t + 1e-9) and t.allclose(t) and not tl.allclose(t, t + 1)
    y = t * tl.ones(3, requires_grad=True)
    assert y.detach_() is y and y.grad_fn is None and not y.requires_grad


def test_autograd_grad_takes_torch_argument_order():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    unused = tl.tensor([1.0], requires_grad=True)
    y = (x * x).sum()
    # PyTorch's order: only_inputs 6th, allow_unused 7th
    gx, gu = tl.autograd.grad(y, [x, unused], None, None, False, True, True)
    np.testing.assert_array_equal(gx.numpy(), [2.0, 4.0])
    assert gu is None
    (g,) = tl.autograd.grad((x * x).sum(), x, None, None, True)  # create_graph, 5th: recorded
    assert g.grad_fn is not None
    with pytest.raises(NotImplementedError, match="create_graph=True: the backward of SvdVals"):
        tl.autograd.grad(tl.linalg.svdvals(x.reshape(1, 2)).sum(), x, create_graph=True)
    with pytest.raises(TypeError, match="expected a Tensor"):
        tl.autograd.grad(y, [3.0])
    assert tl.autograd.Function is tl.Function


def test_autograd_backward_of_several_outputs():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    tl.autograd.backward([(x * x).sum(), x * 3], [None, tl.tensor([1.0, 0.0])])
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 4.0])
    x.grad = None
    tl.autograd.backward((x * x).sum(), create_graph=True)  # x.grad = 2x, with a graph
    assert x.grad.grad_fn is not None
    with pytest.raises(NotImplementedError, match="not differentiable in tensorlib yet"):
        tl.autograd.backward(tl.linalg.svdvals(x.reshape(1, 2)).sum(), create_graph=True)


@pytest.mark.parametrize("reduce", ["sum", "mean", "var", "amax", "amin"])
def test_empty_dims_reduce_everything(reduce):
    x = tl.tensor(np.arange(6.0).reshape(2, 3))
    assert getattr(x, reduce)(dim=()).shape == ()
    assert getattr(x, reduce)(dim=()).item() == pytest.approx(getattr(x, reduce)().item())


def test_dtypes_stay_float32():
    with pytest.raises(TypeError, match="list"):
        tl.ones(2, 3) + [1, 2, 3]
    with pytest.raises(TypeError, match="list"):
        [1, 2, 3] * tl.ones(3)
    assert tl.arange(3).clamp(0.5).dtype == np.float32
    assert tl.cat([tl.ones(2), tl.arange(2)]).dtype == np.float32
    with pytest.raises(TypeError, match="floating point"):
        F.binary_cross_entropy_with_logits(tl.zeros(3), tl.tensor([0, 1, 1]))


@pytest.mark.parametrize(
    ("make", "error", "pattern"),
    [
        (lambda: tl.ones(3).tril(), ValueError, r"at least 2 dims.*\(3,\)"),
        (lambda: tl.ones(3).triu(), ValueError, r"at least 2 dims"),
        (lambda: tl.cat([tl.tensor(1.0), tl.tensor(2.0)]), ValueError, "zero-dimensional"),
        (lambda: tl.ones(3).chunk(0), ValueError, "positive"),
        (
            lambda: tl.arange(3).add_(1.5),
            RuntimeError,
            "can't be cast to the desired output type Long",
        ),
        (lambda: tl.arange(3).div_(2), RuntimeError, "can't be cast"),
        (lambda: tl.arange(3).clamp_(0.5), RuntimeError, "can't be cast"),
        (lambda: tl.ones(3).mul_(tl.ones(4)), ValueError, r"\(4,\).*\(3,\)|\(3,\).*\(4,\)"),
        (lambda: tl.ones(4).clamp(min="a"), TypeError, "min must be a number"),
        (lambda: tl.ones(4).clamp_(), ValueError, "at least one of min and max"),
        (lambda: tl.ones(4) + "a", TypeError, "str"),
        (lambda: tl.tensor([[1, 2], [3]]), ValueError, "same length"),
        (lambda: tl.ones(4) @ [1.0, 2.0, 3.0, 4.0], TypeError, "list"),
        (lambda: tl.ones(4).fill_("a"), TypeError, "number"),
        (lambda: tl.ones(4).fill_(tl.ones(2)), ValueError, "one-element"),
    ],
)
def test_unclear_errors_now_name_what_was_expected(make, error, pattern):
    with pytest.raises(error, match=pattern):
        make()


def test_clamp_with_tensor_bounds():
    x = tl.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    lo = tl.zeros(3)
    y = x.clamp(min=lo, max=1.0)
    np.testing.assert_array_equal(y.numpy(), [0.0, 0.5, 1.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 0.0])
    t = tl.tensor([-1.0, 5.0])
    t.clamp_(min=tl.zeros(2), max=tl.ones(2))
    np.testing.assert_array_equal(t.numpy(), [0.0, 1.0])


@pytest.mark.parametrize(
    "compute",
    [
        lambda x: x.log(),
        lambda x: x.sqrt(),
        lambda x: 1 / x,
        lambda x: x / 0,
        lambda x: x / tl.zeros(3),
        lambda x: x**0.5,
        lambda x: x**-1,
        lambda x: (x * 100).exp(),
        lambda x: tl.tensor(2.0) ** (x * 1000),
    ],
    ids=[
        "log",
        "sqrt",
        "rdiv",
        "div_by_zero_number",
        "div_by_zero_tensor",
        "pow_half",
        "pow_minus_one",
        "exp_overflow",
        "rpow_overflow",
    ],
)
def test_no_numpy_warnings_at_the_edges(compute):
    x = tl.tensor([0.0, -1.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = compute(x)
        y.backward(gradient=tl.ones(y.shape))


def test_functional_function_classes_are_private():
    import tensorlib.nn.functional.activation as activation
    import tensorlib.nn.functional.loss as loss

    for module, names in (
        (activation, ["Gelu", "Silu"]),
        (loss, ["CrossEntropy", "NLLLoss", "BinaryCrossEntropyWithLogits"]),
    ):
        for name in names:
            assert not hasattr(module, name) and hasattr(module, "_" + name), name
            assert name not in module.__all__
    x = tl.ones(2, requires_grad=True)
    assert F.gelu(x).grad_fn.name() == "GeluBackward"


@pytest.mark.parametrize(
    "view",
    [
        lambda x: x[0],
        lambda x: x.view(4)[:2],
        lambda x: x.T[0],
        lambda x: x.reshape(2, 2)[1],
        lambda x: x[0:1].expand(3, 2)[1],
    ],
    ids=["index", "view", "transpose", "reshape", "expand"],
)
def test_views_share_the_version_counter_of_their_base(view):
    w = tl.ones(2, requires_grad=True)
    x = tl.tensor([[1.0, 2.0], [3.0, 4.0]])
    y = (w * view(x)).sum()
    x.add_(1.0)  # changes the memory the view saved
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    x = tl.tensor([[1.0, 2.0], [3.0, 4.0]])
    y = (w * x[1]).sum()
    # a write through another view of the same memory raises the base's version too, as in torch
    x[0].zero_()
    assert x._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_integer_array_indexing_makes_a_copy_with_its_own_counter():
    w = tl.ones(2, requires_grad=True)
    x = tl.tensor([[1.0, 2.0], [3.0, 4.0]])
    y = (w * x[tl.tensor([1])][0]).sum()  # a copy: changing x afterwards does not touch it
    x.add_(1.0)
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 4.0])


def test_retain_grad_keeps_a_non_leaf_gradient_and_accumulates():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    h.retain_grad()
    assert h.retains_grad and not x.retains_grad
    y = (h * h).sum()
    y.backward(retain_graph=True)
    np.testing.assert_array_equal(h.grad.numpy(), [6.0, 12.0])  # dy/dh = 2h
    y.backward(retain_graph=True)  # h's node (x * 3) is used again below
    np.testing.assert_array_equal(h.grad.numpy(), [12.0, 24.0])
    other = x * 2  # a non-leaf that did not ask keeps no .grad
    (other * other).sum().backward()
    assert other.grad is None
    tl.autograd.grad((h * h).sum(), x)  # capture mode touches no .grad, retained or not
    np.testing.assert_array_equal(h.grad.numpy(), [12.0, 24.0])
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        tl.ones(2).retain_grad()


def test_retain_grad_registry_does_not_keep_graphs_alive():
    import gc

    import tensorlib.engine.retain_grad as engine

    before = len(engine._retained)
    h = tl.ones(3, requires_grad=True) * 2
    h.retain_grad()
    assert len(engine._retained) == before + 1
    del h
    gc.collect()
    assert len(engine._retained) == before


# ---------------------------------------------------------------------------------------------
# Round 3: saved outputs, needed values only, freed graphs, .data, format, cuda, view, warnings


OUTPUT_SAVING_OPS = {
    "exp": lambda t: t.exp(),
    "tanh": lambda t: t.tanh(),
    "sigmoid": lambda t: t.sigmoid(),
    "sqrt": lambda t: t.sqrt(),
    "relu": lambda t: t.relu(),
    "softmax": lambda t: t.softmax(-1),
    "log_softmax": lambda t: t.log_softmax(-1),
}


@pytest.mark.parametrize("name", list(OUTPUT_SAVING_OPS))
def test_an_output_changed_in_place_makes_backward_raise(name):
    a = tl.tensor([0.5, 1.0], dtype=tl.float64, requires_grad=True)
    c = OUTPUT_SAVING_OPS[name](a * 1)
    with tl.no_grad():
        c += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
        c.sum().backward()
    message = str(info.value)
    assert "its output" in message and "version is now 1, expected 0" in message, message
    assert a.grad is None


@pytest.mark.parametrize("name", list(OUTPUT_SAVING_OPS))
def test_an_input_changed_in_place_is_harmless_when_the_op_reads_its_output(name):
    a = tl.tensor([0.5, 1.0], dtype=tl.float64, requires_grad=True)
    b = a * 1
    c = OUTPUT_SAVING_OPS[name](b)
    expected = tl.autograd.grad(OUTPUT_SAVING_OPS[name](a * 1).sum(), a)[0]
    with tl.no_grad():
        b += 1
    c.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), expected.numpy(), rtol=1e-12)


def test_a_view_of_a_saved_output_shares_its_version():
    a = tl.tensor([0.5, 1.0], dtype=tl.float64, requires_grad=True)
    c = (a * 1).exp()
    with tl.no_grad():
        c[0:1] += 1
    with pytest.raises(RuntimeError, match="ExpBackward"):
        c.sum().backward()


def test_only_the_values_the_needed_gradients_read_are_checked():
    x = tl.tensor([[1.0, 2.0]], dtype=tl.float64)  # data: needs no gradient
    w = tl.tensor([[0.5], [-1.0]], dtype=tl.float64, requires_grad=True)
    loss = (x @ w).sum()  # w's gradient reads x only
    with tl.no_grad():
        w -= 1.0  # an optimizer step before backward: harmless here, as in torch
    loss.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1.0], [2.0]])
    x2 = tl.tensor([[1.0, 2.0]], dtype=tl.float64, requires_grad=True)
    loss = (x2 @ w).sum()  # now x2's gradient reads w
    with tl.no_grad():
        w -= 1.0
    with pytest.raises(
        RuntimeError,
        match=r"its input 1\) saved for the backward of MatMulBackward.*version is now 2",
    ) as info:
        loss.backward()
    assert names_shape(str(info.value), (2, 1))


def test_backward_twice_raises_like_torch_and_retain_graph_accumulates():
    x = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    with pytest.raises(
        RuntimeError, match="Trying to backward through the graph a second time.*retain_graph=True"
    ):
        loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])  # nothing added by the failed call
    x.grad = None
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match="second time"):
        tl.autograd.grad(loss, x)


def test_backward_frees_the_saved_arrays():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    node = y.grad_fn
    assert node.out is not None
    y.sum().backward()
    assert node.out is None and node.saved is None


def test_a_graph_that_saved_no_arrays_runs_backward_twice_as_in_torch():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    loss = (x + 1).reshape(2, 1)[0:2].sum()  # Add, Reshape, Index (slice), Sum keep shapes only
    loss.backward()
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_autograd_grad_retain_graph_keeps_the_graph():
    x = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    loss = (x * x).sum()
    first = tl.autograd.grad(loss, x, retain_graph=True)[0]
    second = tl.autograd.grad(loss, x)[0]
    np.testing.assert_array_equal(first.numpy(), second.numpy())


def test_data_setter_unwraps_a_tensor_and_numpy_updates_work():
    p = tl.tensor([1.0, 2.0], requires_grad=True)
    (p * p).sum().backward()
    p.data -= 0.5 * p.grad  # in place on the shared storage, as in torch
    np.testing.assert_allclose(p.numpy(), [0.0, 0.0])
    assert type(p.data) is tl.Tensor
    p.data = p.data - 0.5 * p.grad  # a new Tensor: its array becomes p's storage
    np.testing.assert_allclose(p.numpy(), [-1.0, -2.0])
    assert "tensor([-1., -2.]" in repr(p) and p.requires_grad and p.is_leaf
    p.data = np.zeros((3, 1), dtype=np.float64)  # any shape and dtype, as in torch
    assert p.shape == (3, 1) and p.dtype == tl.float64
    with pytest.raises(TypeError, match="ndarray or a Tensor"):
        p.data = [1.0, 2.0]


def test_data_is_a_detached_tensor_sharing_storage_as_in_torch():
    """torch: ``p.data`` is a Tensor without grad that shares p's storage; writes through it change
    p."""
    p = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    d = p.data
    assert isinstance(d, tl.Tensor) and not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert np.shares_memory(d.numpy(), p.numpy())
    version = p._version
    # in grad mode, on a leaf that requires grad: allowed through .data
    p.data.add_(tl.tensor([1.0, 1.0, 1.0]))
    np.testing.assert_array_equal(p.numpy(), [2.0, 3.0, 4.0])
    p.data.copy_(tl.tensor([0.5, 0.5, 0.5]))
    np.testing.assert_array_equal(p.numpy(), [0.5, 0.5, 0.5])
    p.data.mul_(2.0)
    np.testing.assert_array_equal(p.numpy(), [1.0, 1.0, 1.0])
    assert p._version == version, (
        "a change through .data is invisible to p's version counter, as in torch"
    )
    (p * p).sum().backward()
    p.grad.data.zero_()
    np.testing.assert_array_equal(p.grad.numpy(), [0.0, 0.0, 0.0])
    p.data = tl.tensor([7.0, 8.0])  # assigning a Tensor: p now holds its values (any shape)
    assert p.shape == (2,) and p.requires_grad and p.tolist() == [7.0, 8.0]
    q = tl.tensor([1.0, 2.0], requires_grad=True)
    y = q * 3
    assert (
        not y.data.requires_grad
        and y.data.grad_fn is None
        and np.shares_memory(y.data.numpy(), y.numpy())
    )


@pytest.mark.parity
def test_data_matches_torch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        p = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (p * p).sum().backward()
        p.data.add_(p.grad, alpha=-0.25)
        p.grad.data.zero_()
        p.data.copy_(p.data * 2)
        results.append(
            (p.tolist(), p.grad.tolist(), p.data.requires_grad, p.requires_grad, p.is_leaf)
        )
    assert results[0] == results[1], results


def test_numpy_ufuncs_on_tensors():
    t = tl.tensor([1.0, 2.0], requires_grad=True)
    a = np.array([2.0, 2.0], dtype=np.float32)
    assert (a * t).grad_fn is not None and (a - t).tolist() == [1.0, 0.0]
    assert (a < t).tolist() == [False, False] and (a <= t).tolist() == [False, True]
    with pytest.raises(TypeError, match="numpy's exp does not take Tensors"):
        np.exp(t)


def test_format_like_torch():
    assert f"{tl.tensor(1.23456):.3f}" == "1.235"
    assert f"{tl.tensor(3):d}" == "3"
    assert f"{tl.tensor([1.0, 2.0])}" == repr(tl.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{tl.tensor([1.0, 2.0]):.2f}"


def test_cuda_namespace_and_is_cuda():
    assert tl.cuda.is_available() is False and tl.cuda.device_count() == 0
    tl.cuda.manual_seed(0)
    tl.cuda.manual_seed_all(0)
    assert tl.ones(2).is_cuda is False


def test_view_refuses_what_needs_a_copy():
    t = tl.zeros(2, 3).t()
    with pytest.raises(RuntimeError, match=r"view size is not compatible.*Use \.reshape"):
        t.view(6)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view_as(tl.zeros(6))
    assert t.reshape(6).shape == (6,)
    assert t.view(3, 1, 2).shape == (3, 1, 2)  # splitting no dim across others: a view
    assert tl.zeros(4, 3)[::2].view(2, 3).shape == (2, 3)  # non-contiguous rows, each kept whole
    with pytest.raises(ValueError, match="invalid for input of shape"):
        t.view(7)


def test_backward_through_inf_times_zero_is_silent_nan():
    x = tl.zeros(3, dtype=tl.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x * x).sum().sqrt().backward()
    assert np.isnan(x.grad.numpy()).all()


def test_float16_repr_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = repr(tl.tensor([1.5, 60000.0], dtype=tl.float16))
    assert "float16" in text


def test_requires_grad_of_a_non_leaf_cannot_be_set():
    x = tl.ones(2, requires_grad=True)
    h = x * 2
    for value in (False, True):
        with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
            h.requires_grad = value
    assert h.requires_grad_(True) is h  # a no-op, as in torch
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        h.requires_grad_(False)
    leaf = tl.ones(2)
    leaf.requires_grad = True
    assert leaf.requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        tl.tensor([1, 2]).requires_grad = True


def test_mean_of_an_integer_tensor_raises_like_torch():
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        tl.tensor([1, 2]).mean()
    assert tl.tensor([1, 2]).float().mean().item() == 1.5


def test_new_tensors_take_the_dtype_of_self():
    x = tl.ones(2, dtype=tl.float64)
    assert x.new_zeros(3).dtype == tl.float64 and x.new_zeros(3).tolist() == [0.0] * 3
    assert x.new_ones((2, 2), dtype=tl.float32).dtype == tl.float32
    made = x.new_tensor([1, 2], requires_grad=True)
    assert made.dtype == tl.float64 and made.requires_grad and made.is_leaf
    assert tl.tensor([1, 2]).type_as(x).dtype == tl.float64
    assert tl.inf == float("inf") and tl.nan != tl.nan


def test_masked_fill_in_place():
    x = tl.zeros(2, 3)
    mask = tl.tensor([[True, False, True]])
    assert x.masked_fill_(mask, 5.0) is x and x._version == 1
    assert x.tolist() == [[5.0, 0.0, 5.0], [5.0, 0.0, 5.0]]
    with pytest.raises(TypeError, match="bool mask"):
        x.masked_fill_(tl.tensor([1, 0, 1]), 1.0)
    with pytest.raises(ValueError, match="broadcast"):
        x.masked_fill_(tl.tensor([True, False]), 1.0)
    w = tl.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.masked_fill_(tl.tensor([True, False, True]), 0.0)


def test_more_ops_check_their_arguments_like_torch():
    x = tl.zeros(3, 4)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        x.gather(1, tl.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.gather(1, tl.tensor([[4]]))
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.gather(1, tl.tensor([[-1]]))
    with pytest.raises(RuntimeError, match="Expected dtype int64"):
        x.gather(1, tl.tensor([[0.0]]))
    with pytest.raises(RuntimeError, match="Size does not match at dimension 0"):
        x.gather(1, tl.zeros(4, 1, dtype=tl.int64))
    with pytest.raises(RuntimeError, match="can not be smaller"):
        x.repeat(2)
    with pytest.raises(ValueError, match="p must be a number, 'fro' or 'nuc'"):
        x.norm(p="max")  # (every number p is a norm, as in torch.norm)
    with pytest.raises(RuntimeError, match="3D tensor"):
        x.bmm(x)
    with pytest.raises(RuntimeError, match="batch sizes differ"):
        tl.zeros(2, 3, 4).bmm(tl.zeros(3, 4, 5))
    with pytest.raises(RuntimeError, match="1-D tensors"):
        x.outer(x)
    with pytest.raises(RuntimeError, match="out of range"):
        x.topk(5, dim=1)


def test_norm_gradient_at_zero_is_zero_and_backward_frees_nothing_wrong():
    z = tl.zeros(2, 3, dtype=tl.float64, requires_grad=True)
    z.norm(dim=1).sum().backward()
    assert z.grad.tolist() == [[0.0] * 3] * 2
    values, indices = tl.tensor([[3.0, 1.0, 2.0]]).sort(dim=1, descending=True)
    assert (
        values.tolist() == [[3.0, 2.0, 1.0]]
        and indices.tolist() == [[0, 2, 1]]
        and indices.dtype == tl.int64
    )


def test_an_in_place_change_is_refused_before_any_grad_is_touched():
    """The version check runs over the whole graph before the pass: no leaf gets half of a
    gradient."""
    a = tl.ones(3, requires_grad=True)
    b = tl.ones(3, requires_grad=True)
    data = tl.tensor([1.0, 2.0, 3.0])
    loss = (a * 2).sum() + (b * data).sum()  # the node that reads data is not the first one visited
    with tl.no_grad():
        data.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    assert a.grad is None and b.grad is None


def test_masked_fill_with_a_broadcast_mask_matches_np_where_and_zeroes_the_masked_gradient():
    # a (T, T) mask over (B, h, T, T) scores, a transposed input, and NaN/inf in the upstream
    # gradient at masked places: the masked gradient must be exactly 0, as with np.where
    rng = np.random.default_rng(3)
    mask = np.triu(np.ones((5, 5), dtype=bool), 1)
    data = rng.standard_normal((2, 3, 5, 5)).astype(np.float32).transpose(0, 1, 3, 2)
    x = tl.tensor(data, requires_grad=True)
    y = x.masked_fill(tl.tensor(mask), float("-inf"))
    np.testing.assert_array_equal(y.numpy(), np.where(mask, np.float32(-np.inf), data))
    upstream = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    upstream[..., 0, 4], upstream[..., 1, 3] = np.nan, np.inf  # both masked places
    y.backward(tl.tensor(upstream))
    np.testing.assert_array_equal(x.grad.numpy(), np.where(mask, np.float32(0), upstream))
    assert x.grad.dtype == np.float32


def test_softmax_skips_the_shift_only_when_every_entry_below_the_limit_is_minus_inf():
    from tensorlib.engine.softmax_ops import _softmax_unshifted

    scores = np.float32([[0.5, -np.inf, 2.0], [-59.0, 0.0, -np.inf]])
    fast = _softmax_unshifted(scores)
    assert fast is not None
    shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
    np.testing.assert_allclose(fast, shifted / shifted.sum(axis=1, keepdims=True), rtol=1e-6)
    # a finite score below -60 (beside a -inf, so the counts differ), or above 60: shifted
    assert _softmax_unshifted(np.float32([[-100.0, 0.0, -np.inf]])) is None
    assert _softmax_unshifted(np.float32([[-100.0, 0.0]])) is None
    assert _softmax_unshifted(np.float32([[61.0, 0.0]])) is None
    assert _softmax_unshifted(np.float32([[np.nan, 0.0]])) is None
    # and the Tensor op takes the shifted path there, with the right answer
    out = tl.tensor(np.float32([[-100.0, 0.0, -np.inf]])).softmax(dim=-1).numpy()
    np.testing.assert_allclose(out, [[np.exp(-100.0), 1.0, 0.0]], rtol=1e-6, atol=1e-45)


def test_the_kept_constant_vectors_are_shared_read_only_and_large_ones_are_not_kept():
    from tensorlib.engine.softmax_ops import _constant

    ones = _constant((7,), 1.0, np.dtype(np.float32))
    assert ones is _constant((7,), 1.0, np.float32) and ones.dtype == np.float32
    assert not ones.flags.writeable and np.array_equal(ones, np.ones(7, np.float32))
    with pytest.raises(ValueError):
        ones[0] = 2.0
    big = _constant((1 << 17,), 1.0, np.float64)
    assert big is not _constant((1 << 17,), 1.0, np.float64) and not big.flags.writeable


# ---------------------------------------------------------------------------------------------
# slices add their gradients into their input's running sum (Index.backward_into)
# ---------------------------------------------------------------------------------------------


def _split_graph_gradients(build, seed=0):
    """The gradient of a leaf through ``build(u)`` with u = 1.5 x: with backward_into, and
    with every Index node taking the zero-array route instead."""
    from tensorlib.engine.indexing import Index

    x_data = np.random.default_rng(seed).standard_normal((3, 4, 9))
    results = []
    for into in (True, False):
        x = tl.tensor(x_data, requires_grad=True)
        outputs = build(x * 1.5)
        loss = outputs[0].sum() * 0.0
        for i, out in enumerate(outputs):
            loss = loss + (out * (i + 1.25)).sum()
        Index.adds_into_input = into
        try:
            loss.backward()
        finally:
            Index.adds_into_input = True
        results.append(x.grad.numpy())
    return results


@pytest.mark.parametrize(
    "build",
    [
        lambda u: u.split(3, dim=2),  # pieces only: zeros made by the pass
        lambda u: (*u.split(3, dim=2), u * u),  # another consumer of u as well
        lambda u: (u * u, *u.split(3, dim=2)),  # the other consumer first
        lambda u: (*u.split(3, dim=2), u + u),  # Add hands one array to both of its inputs
        lambda u: (*u.split(3, dim=2), tl.cat([u, u])),  # Cat's gradients are views
        lambda u: (u[:, 1], u[:, 1:3], u[tl.tensor([0, 0, 2])]),  # overlaps, repeated rows
        lambda u: (u[u > 0],),  # a boolean mask
    ],
)
def test_slices_add_into_their_input_as_the_zero_arrays_would(build):
    into, zeros = _split_graph_gradients(build)
    np.testing.assert_array_equal(into, zeros)
    # and against the definition: the same graph in float64 by finite differences
    x = tl.tensor(np.random.default_rng(1).standard_normal((3, 4, 6)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: build(t * 1.5), (x,))


def test_a_gradient_another_node_also_received_is_not_written_into():
    """``u + v`` gives its upstream gradient to both u and v as one array; u's pieces then add
    into u's running sum: v's gradient must stay what it was."""
    x = tl.tensor(np.ones((2, 6)), requires_grad=True)
    y = tl.tensor(np.ones((2, 6)), requires_grad=True)
    u, v = x * 2.0, y * 3.0
    s = u + v
    a, b = u.split(3, dim=1)
    (s.sum() + (a * 10.0).sum() + (b * 100.0).sum()).backward()
    np.testing.assert_array_equal(y.grad.numpy(), np.full((2, 6), 3.0))
    np.testing.assert_array_equal(x.grad.numpy(), [[22.0] * 3 + [202.0] * 3] * 2)


def test_slices_of_a_leaf_keep_the_usual_route_and_retain_graph_works():
    x = tl.tensor(np.arange(6.0), requires_grad=True)
    a, b = x.split(3)
    (a.sum() * 2 + b.sum() * 3).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2, 3, 3, 3])
    u = x * 1.0
    c, d = u.split(3)
    loss = c.sum() + 5 * d.sum()
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4, 4, 4, 13, 13, 13])
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
