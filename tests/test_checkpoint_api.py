"""torch.utils.checkpoint's other names in tensorlib.utils.checkpoint (chapter 7, section 14),
compared with PyTorch where it is installed."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.utils import checkpoint as tuc


def _layer():
    return nn.Linear(3, 3, generator=tl.Generator(5))


def test_checkpoint_error_is_the_chapters_error_class():
    # PyTorch's is a RuntimeError; ours is chapter 7's one CheckpointError (a ValueError)
    assert tuc.CheckpointError is tl.serialization.CheckpointError
    assert issubclass(tuc.CheckpointError, Exception)


def test_detach_variable():
    a = tl.ones(2).requires_grad_()
    b = tl.zeros(2)
    out = tuc.detach_variable((a, b, "x", 3))
    assert out[0] is not a and out[0].requires_grad and out[0].grad_fn is None
    assert not out[1].requires_grad and out[2:] == ("x", 3)
    assert np.shares_memory(out[0].numpy(), a.detach().numpy())
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported. Got Unsupported "
                                           "input type: list"):
        tuc.detach_variable([a])


def test_check_backward_validity_warns_when_nothing_requires_grad():
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        tuc.check_backward_validity([tl.zeros(1), 3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tuc.check_backward_validity([tl.zeros(1).requires_grad_()])


def test_device_states_on_the_cpu():
    assert tuc.get_device_states(tl.zeros(2), 3) == ([], [])
    tuc.set_device_states([], [])
    with pytest.raises(RuntimeError, match="tensorlib has only the CPU"):
        tuc.set_device_states([0], [tl.zeros(16)])
    assert tuc.DefaultDeviceType.get_device_type() == "cpu"
    try:
        tuc.DefaultDeviceType.set_device_type("meta")
        assert tuc.DefaultDeviceType.get_device_type() == "meta"
    finally:
        tuc.DefaultDeviceType._default_device_type = None


def test_debug_override_refuses_a_context_fn_and_is_restored():
    layer, x = _layer(), tl.randn(2, 3, generator=tl.Generator(1))

    def other_context():
        return tuc.noop_context_fn()

    with tuc.set_checkpoint_debug_enabled(True):
        with pytest.raises(ValueError, match="debug=True is incompatible with non-default"):
            tuc.checkpoint(layer, x, use_reentrant=False, context_fn=other_context)
    tuc.checkpoint(layer, x, use_reentrant=False, context_fn=other_context)
    with tuc.set_checkpoint_debug_enabled(False):  # overrides a call's debug=True
        tuc.checkpoint(layer, x, use_reentrant=False, context_fn=other_context, debug=True)
    assert tuc._checkpoint_debug_enabled is None


def test_early_stop_override_changes_nothing_and_is_restored():
    layer, x = _layer(), tl.randn(2, 3, generator=tl.Generator(1)).requires_grad_()
    with tuc.set_checkpoint_early_stop(False):
        out = tuc.checkpoint(layer, x, use_reentrant=False)
    assert tuc._enable_checkpoint_early_stop is None
    out.sum().backward()
    expected = x.grad.numpy().copy()
    x.grad = None
    layer(x).sum().backward()
    np.testing.assert_array_equal(expected, x.grad.numpy())


def test_checkpoint_function_apply_is_the_reentrant_checkpoint():
    layer = _layer()
    x = tl.randn(2, 3, dtype=tl.float64, generator=tl.Generator(2))
    layer = layer.to(tl.float64)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = tuc.CheckpointFunction.apply(layer, True, x)
    out.square().sum().backward()
    got = layer.weight.grad.numpy().copy()
    layer.zero_grad()
    layer(x).square().sum().backward()
    np.testing.assert_array_equal(got, layer.weight.grad.numpy())


def test_checkpoint_function_gradcheck_float64():
    weight = tl.randn(3, 3, dtype=tl.float64, generator=tl.Generator(3)).requires_grad_()
    x = tl.randn(2, 3, dtype=tl.float64, generator=tl.Generator(4)).requires_grad_()

    def run(x, weight):
        return tuc.CheckpointFunction.apply(lambda h: (h @ weight).tanh(), True, x)

    assert tl.autograd.gradcheck(run, (x, weight))


def test_selective_checkpointing_is_refused_with_the_reason():
    assert [p.value for p in tuc.CheckpointPolicy] == [0, 1, 2, 3, 4, 5]
    ctx = tuc.SelectiveCheckpointContext(is_recompute=False)
    assert ctx.is_recompute is False and ctx.op_output is None
    with pytest.raises(TypeError):
        tuc.SelectiveCheckpointContext(False)  # keyword only, as in PyTorch
    def policy(ctx, op, *args, **kwargs):
        return tuc.CheckpointPolicy.MUST_SAVE

    context_fn = functools.partial(tuc.create_selective_checkpoint_contexts, policy)
    with pytest.raises(NotImplementedError, match="sees no|no dispatcher"):
        tuc.checkpoint(_layer(), tl.zeros(1, 3), use_reentrant=False, context_fn=context_fn)


def test_use_reentrant_warnings_are_pytorchs_text():
    x = tl.zeros(1, 3)
    with pytest.warns(UserWarning) as caught:
        tuc.checkpoint(_layer(), x)
    assert str(caught[0].message).startswith(
        "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly."
    )
    with pytest.warns(UserWarning) as caught:
        tuc.checkpoint_sequential(nn.Sequential(_layer(), _layer()), 1, x)
    assert str(caught[0].message).startswith(
        "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be"
    )


# ---------------------------------------------------------------- parity with PyTorch


@pytest.mark.parity
def test_names_match_torch_utils_checkpoint():
    torch = pytest.importorskip("torch")
    wanted = set(torch.utils.checkpoint.__all__) - {"SAC_IGNORED_OPS", "GraphExecGroup"}
    assert wanted <= set(dir(tuc))
    assert [(p.name, p.value) for p in tuc.CheckpointPolicy] == [
        (p.name, p.value) for p in torch.utils.checkpoint.CheckpointPolicy
    ]


@pytest.mark.parity
def test_warnings_and_errors_match_torch():
    torch = pytest.importorskip("torch")
    tc = torch.utils.checkpoint
    with pytest.warns(UserWarning) as theirs:
        tc.checkpoint(torch.nn.Linear(3, 3), torch.zeros(1, 3))
    with pytest.warns(UserWarning) as ours:
        tuc.checkpoint(_layer(), tl.zeros(1, 3))
    assert str(ours[0].message) == str(theirs[0].message)
    with pytest.warns(UserWarning) as theirs:
        tc.checkpoint_sequential(torch.nn.Sequential(torch.nn.Linear(3, 3)), 1, torch.zeros(1, 3))
    with pytest.warns(UserWarning) as ours:
        tuc.checkpoint_sequential(nn.Sequential(_layer()), 1, tl.zeros(1, 3))
    assert str(ours[0].message) == str(theirs[0].message)
    with pytest.raises(RuntimeError) as theirs_error:
        tc.detach_variable([torch.zeros(1)])
    with pytest.raises(RuntimeError) as ours_error:
        tuc.detach_variable([tl.zeros(1)])
    assert str(ours_error.value) == str(theirs_error.value)
    with pytest.warns(UserWarning) as theirs:
        tc.check_backward_validity([torch.zeros(1)])
    with pytest.warns(UserWarning) as ours:
        tuc.check_backward_validity([tl.zeros(1)])
    assert str(ours[0].message) == str(theirs[0].message)
    assert tuc.get_device_states(tl.zeros(2)) == tc.get_device_states(torch.zeros(2))

    def other():
        return tc.noop_context_fn()

    for module, lib, make in [(tc, torch, torch.nn.Linear), (tuc, tl, None)]:
        layer = make(3, 3) if make else _layer()
        with module.set_checkpoint_debug_enabled(True), pytest.raises(
            ValueError, match="debug=True is incompatible with non-default context_fn"
        ):
            module.checkpoint(layer, lib.zeros(1, 3), use_reentrant=False, context_fn=other)


@pytest.mark.parity
def test_checkpoint_function_apply_gradients_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    tw = torch.tensor(w, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    torch.utils.checkpoint.CheckpointFunction.apply(
        lambda h: (h @ tw).tanh(), True, tx
    ).square().sum().backward()
    lw = tl.tensor(w).requires_grad_()
    lx = tl.tensor(x).requires_grad_()
    tuc.CheckpointFunction.apply(lambda h: (h @ lw).tanh(), True, lx).square().sum().backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(lw.grad.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-14)
