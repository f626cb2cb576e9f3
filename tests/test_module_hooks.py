"""Module hooks (chapter 4, section 2.5): forward pre-hooks and hooks, full backward pre-hooks
and hooks, the global forward hooks, handles, and PyTorch parity.

The behaviour tests need only tensorlib; the parity tests run the same small model and hooks in
tensorlib and in torch and compare what the hooks recorded, the modified inputs and outputs, and
the gradients.
"""

from __future__ import annotations

import copy
import pickle
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.nn.modules import module as module_module
from tensorlib.utils.hooks import RemovableHandle


class Scale(nn.Module):
    """``forward(x) = x * factor``, with a parameter so that outputs require grad."""

    def __init__(self, factor: float = 2.0) -> None:
        super().__init__()
        self.factor = nn.Parameter(tl.tensor([factor]))

    def forward(self, x: Any) -> Any:
        return x * self.factor


def values(t: Any) -> Any:
    return None if t is None else np.asarray(t.detach().numpy()).tolist()


# ----------------------------------------------------------------------------- forward hooks


def test_forward_pre_hook_replaces_input_and_single_value_is_wrapped() -> None:
    m = Scale(2.0)
    seen: list[Any] = []
    m.register_forward_pre_hook(lambda mod, args: seen.append(args) or args[0] + 1)
    out = m(tl.tensor([1.0]))
    assert values(out) == [4.0]  # (1 + 1) * 2
    assert isinstance(seen[0], tuple) and len(seen[0]) == 1


def test_forward_pre_hook_with_kwargs_and_bad_return() -> None:
    class Add(nn.Module):
        def forward(self, x: Any, *, y: float = 0.0) -> Any:
            return x + y

    m = Add()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"y": 10.0}), with_kwargs=True)
    assert m(1.0, y=1.0) == 11.0
    bad = Add()
    bad.register_forward_pre_hook(lambda mod, args, kwargs: 3, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        bad(1.0)


def test_forward_hook_replaces_output_and_sees_args_kwargs() -> None:
    m = Scale(3.0)
    calls: list[Any] = []
    m.register_forward_hook(lambda mod, args, out: calls.append(("plain", values(args[0]))))
    m.register_forward_hook(
        lambda mod, args, kwargs, out: calls.append(("kw", kwargs)) or out * 0, with_kwargs=True
    )
    out = m(tl.tensor([1.0]))
    assert values(out) == [0.0]
    assert calls == [("plain", [1.0]), ("kw", {})]


def test_remove_stops_the_hook_and_twice_is_harmless() -> None:
    m = Scale(2.0)
    count: list[int] = []
    handle = m.register_forward_hook(lambda mod, args, out: count.append(1))
    assert isinstance(handle, RemovableHandle)
    m(tl.tensor([1.0]))
    handle.remove()
    handle.remove()
    m(tl.tensor([1.0]))
    assert count == [1]
    assert not m._forward_hooks


def test_handle_as_context_manager() -> None:
    m = Scale(2.0)
    with m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,)):
        assert values(m(tl.tensor([5.0]))) == [0.0]
    assert values(m(tl.tensor([5.0]))) == [10.0]


def test_prepend_order_for_every_kind() -> None:
    m = Scale(2.0)
    order: list[str] = []
    for label, prepend in [("a", False), ("b", False), ("c", True)]:
        m.register_forward_pre_hook(
            lambda mod, a, l=label: order.append("pre" + l), prepend=prepend
        )
        m.register_forward_hook(lambda mod, a, o, l=label: order.append("fwd" + l), prepend=prepend)
        m.register_full_backward_pre_hook(lambda mod, g, l=label: order.append("bpre" + l), prepend)
        m.register_full_backward_hook(lambda mod, gi, go, l=label: order.append("bwd" + l), prepend)
    m(tl.tensor([1.0], requires_grad=True)).sum().backward()
    assert order == [
        "prec", "prea", "preb", "fwdc", "fwda", "fwdb",
        "bprec", "bprea", "bpreb", "bwdc", "bwda", "bwdb",
    ]


def test_always_call_runs_on_exception_then_reraises() -> None:
    class Boom(nn.Module):
        def forward(self, x: Any) -> Any:
            raise ValueError("boom")

    m = Boom()
    calls: list[Any] = []
    m.register_forward_hook(lambda mod, args, out: calls.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, args, out: calls.append(("normal", out)))
    with pytest.raises(ValueError, match="boom"):
        m(1)
    assert calls == [("always", None)]


def test_always_call_hook_that_raises_only_warns_and_runs_once() -> None:
    m = Scale(2.0)
    calls: list[int] = []

    def failing(mod: Any, args: Any, out: Any) -> None:
        calls.append(1)
        raise KeyError("second")

    m.register_forward_hook(failing, always_call=True)
    with pytest.raises(KeyError):  # it ran in the normal path: it is not run again
        m(tl.tensor([1.0]))
    assert calls == [1]

    class Boom(nn.Module):
        def forward(self, x: Any) -> Any:
            raise ValueError("first")

    b = Boom()
    b.register_forward_hook(failing, always_call=True)
    with pytest.warns(UserWarning, match="always_call=True.*second"):
        with pytest.raises(ValueError, match="first"):
            b(1)


def test_non_callable_hook_is_refused() -> None:
    m = Scale()
    for register in (
        m.register_forward_pre_hook,
        m.register_forward_hook,
        m.register_full_backward_pre_hook,
        m.register_full_backward_hook,
        module_module.register_module_forward_hook,
        module_module.register_module_forward_pre_hook,
    ):
        with pytest.raises(TypeError, match="callable hook, got int"):
            register(3)  # type: ignore[operator]


def test_global_forward_hooks_run_before_the_modules_own() -> None:
    m = Scale(2.0)
    order: list[str] = []
    m.register_forward_pre_hook(lambda mod, args: order.append("own pre"))
    m.register_forward_hook(lambda mod, args, out: order.append("own"))
    pre = module_module.register_module_forward_pre_hook(lambda mod, a: order.append("global pre"))
    post = module_module.register_module_forward_hook(lambda mod, a, o: order.append("global"))
    try:
        m(tl.tensor([1.0]))
    finally:
        pre.remove()
        post.remove()
    assert order == ["global pre", "own pre", "global", "own"]
    order.clear()
    m(tl.tensor([1.0]))
    assert order == ["own pre", "own"]


def test_removed_flags_are_forgotten() -> None:
    m = Scale()
    for _ in range(5):
        m.register_forward_hook(lambda *a: None, with_kwargs=True, always_call=True).remove()
    m.register_forward_hook(lambda *a: None)
    assert len(m._forward_hooks_with_kwargs) == 0
    assert len(m._forward_hooks_always_called) == 0


def test_hooks_are_not_state_and_survive_deepcopy_and_pickle() -> None:
    m = Scale(2.0)
    calls: list[int] = []
    m.register_forward_hook(_append_one(calls))
    assert list(m.state_dict()) == ["factor"]
    twin = copy.deepcopy(m)
    twin(tl.tensor([1.0]))
    assert len(calls) == 1 and len(twin._forward_hooks) == 1
    plain = Scale(2.0)
    plain.register_forward_pre_hook(_add_one)
    loaded = pickle.loads(pickle.dumps(plain))
    assert values(loaded(tl.tensor([1.0]))) == [4.0]
    old = Scale(2.0)
    state = old.__dict__.copy()
    for table in module_module._HOOK_TABLES:
        del state[table]
    fresh = object.__new__(Scale)
    fresh.__setstate__(state)  # a module pickled before hooks existed gets empty tables
    assert values(fresh(tl.tensor([1.0]))) == [2.0]


def _add_one(module: Any, args: Any) -> Any:
    return args[0] + 1


def _append_one(calls: list[int]) -> Callable[..., None]:
    return lambda module, args, out: calls.append(1)


# ----------------------------------------------------------------------------- backward hooks


def test_full_backward_hook_sees_grad_input_and_grad_output() -> None:
    m = Scale(3.0)
    seen: list[Any] = []
    m.register_full_backward_hook(
        lambda mod, gi, go: seen.append(([values(g) for g in gi], [values(g) for g in go]))
    )
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    m(x).sum().backward()
    assert seen == [([[3.0, 3.0]], [[1.0, 1.0]])]
    assert values(x.grad) == [3.0, 3.0]


def test_full_backward_hook_replaces_grad_input_and_pre_hook_grad_output() -> None:
    m = Scale(3.0)
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,))
    x = tl.tensor([1.0], requires_grad=True)
    m(x).sum().backward()
    assert values(x.grad) == [31.0]  # 1 * 10 * 3 + 1
    assert values(m.factor.grad) == [10.0]  # the pre-hook's grad_output reaches the parameter


def test_backward_hooks_fire_once_per_pass_and_wrong_length_raises() -> None:
    m = Scale(2.0)
    count: list[int] = []
    m.register_full_backward_hook(lambda mod, gi, go: count.append(1))
    y = m(tl.tensor([1.0], requires_grad=True)) * 1
    z = y + y  # two uses of the output: still one call
    z.sum().backward(retain_graph=True)
    z.sum().backward()
    assert count == [1, 1]
    bad = Scale(2.0)
    bad.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
        bad(tl.tensor([1.0], requires_grad=True)).sum().backward()


def test_no_input_requiring_grad_fires_at_outputs_with_warning() -> None:
    m = Scale(2.0)
    seen: list[Any] = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, values(go[0]))))
    with pytest.warns(UserWarning, match="Full backward hook is firing"):
        m(tl.tensor([1.0])).sum().backward()
    assert seen == [((None,), [1.0])]
    bad = Scale(2.0)
    bad.register_full_backward_hook(lambda mod, gi, go: (tl.ones(1),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="no input requires gradient should always return"):
            bad(tl.tensor([1.0])).sum().backward()


def test_no_backward_hook_call_under_no_grad_or_after_removal() -> None:
    m = Scale(2.0)
    count: list[int] = []
    handle = m.register_full_backward_hook(lambda mod, gi, go: count.append(1))
    with tl.no_grad():
        out = m(tl.tensor([1.0], requires_grad=True))
    assert out.grad_fn is None and count == []
    handle.remove()
    x = tl.tensor([1.0], requires_grad=True)
    out = m(x)
    assert out.grad_fn is not None and out.grad_fn.name() == "MulBackward"  # no gate any more
    out.sum().backward()
    assert count == []


def test_inputs_are_routed_through_copies_that_share_memory() -> None:
    inside: list[Any] = []

    class Keep(nn.Module):
        def forward(self, x: Any) -> Any:
            inside.append(x)
            return x * 2

    m = Keep()
    m.register_full_backward_hook(lambda mod, gi, go: None)
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    out = m(x)
    assert inside[0] is not x and np.shares_memory(inside[0].numpy(), x.detach().numpy())
    assert inside[0].grad_fn is not None
    assert inside[0].grad_fn.name() == "BackwardHookFunctionBackward"
    # PyTorch refuses an in-place change of the output (a view there); here it is recorded
    # like any other in-place op, and the gradient is the one of (x * 2) * 2
    out.mul_(2).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_non_tensor_output_warns() -> None:
    class Dict(nn.Module):
        def forward(self, x: Any) -> Any:
            return {"y": x * 2}

    m = Dict()
    m.register_full_backward_hook(lambda mod, gi, go: None)
    with pytest.warns(UserWarning, match="module output should be a Tensor or a tuple"):
        m(tl.tensor([1.0], requires_grad=True))


def test_no_hook_call_path_is_plain_forward() -> None:
    m = Scale(2.0)
    x = tl.tensor([1.0], requires_grad=True)
    assert m(x).grad_fn.name() == "MulBackward"


# ----------------------------------------------------------------------------- parity


def _run_model(lib: Any) -> dict[str, Any]:
    """One small model and a set of hooks, in ``lib`` (tensorlib or torch); what they saw."""
    nn_ = lib.nn

    class Two(nn_.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn_.Linear(3, 4)
            self.fc2 = nn_.Linear(4, 2)

        def forward(self, x: Any, y: Any, scale: float = 1.0) -> Any:
            h = self.fc1(x).tanh()
            return self.fc2(h) * scale, (h * y).sum(-1), "label"

    model = Two()
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    log: list[Any] = []

    def v(t: Any) -> Any:
        return None if t is None else np.round(t.detach().numpy().astype(np.float64), 5).tolist()

    model.register_forward_pre_hook(lambda m, args, kw: (args, {"scale": 2.0}), with_kwargs=True)
    model.fc1.register_forward_pre_hook(lambda m, args: args[0] * 0.5)
    model.fc1.register_forward_hook(lambda m, args, out: log.append(("fc1 out", v(out))))
    model.fc2.register_forward_hook(lambda m, args, out: out + 1, prepend=True)
    model.register_full_backward_pre_hook(
        lambda m, go: log.append(("pre", [v(g) if g is not None else None for g in go]))
    )
    model.register_full_backward_pre_hook(lambda m, go: (go[0] * 2, go[1], go[2]))
    model.register_full_backward_hook(
        lambda m, gi, go: log.append(("full", [v(g) for g in gi], [v(g) for g in go]))
    )
    model.register_full_backward_hook(lambda m, gi, go: (gi[0] - 1, gi[1]), prepend=True)
    model.fc2.register_full_backward_hook(
        lambda m, gi, go: log.append(("fc2", [tuple(g.shape) for g in gi], [v(g) for g in go]))
    )
    x = lib.tensor(rng.standard_normal((2, 3)).astype(np.float32), requires_grad=True)
    y = lib.tensor(rng.standard_normal((2, 4)).astype(np.float32), requires_grad=True)
    out, side, label = model(x, y)
    log.append(("out", v(out), label))
    out.sum().backward()  # the second output receives no gradient: None in grad_output
    log.append(("grads", v(x.grad), v(y.grad)))
    log.append(("params", [v(p.grad) for p in model.parameters()]))
    return {"log": log}


@pytest.mark.parity
def test_parity_recorded_calls_values_and_gradients() -> None:
    torch = pytest.importorskip("torch")
    mine, theirs = _run_model(tl), _run_model(torch)
    assert [entry[0] for entry in mine["log"]] == [entry[0] for entry in theirs["log"]]
    for a, b in zip(mine["log"], theirs["log"], strict=True):
        _assert_close(a, b)


@pytest.mark.parity
def test_parity_global_hooks_and_always_call() -> None:
    torch = pytest.importorskip("torch")

    def run(lib: Any, register: Any, register_pre: Any) -> list[Any]:
        order: list[Any] = []

        class Boom(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                raise ValueError("boom")

        seq = lib.nn.Sequential(lib.nn.Identity(), lib.nn.Identity())
        handles = [
            register_pre(lambda m, a: order.append(("gpre", type(m).__name__))),
            register(lambda m, a, o: order.append(("g", type(m).__name__))),
            register(
                lambda m, a, o: order.append(("g-always", type(m).__name__)), always_call=True
            ),
        ]
        try:
            seq(lib.ones(1))
            with pytest.raises(ValueError):
                Boom()(1)
        finally:
            for h in handles:
                h.remove()
        seq(lib.ones(1))
        return order

    mine = run(
        tl, module_module.register_module_forward_hook,
        module_module.register_module_forward_pre_hook,
    )
    theirs = run(
        torch, torch.nn.modules.module.register_module_forward_hook,
        torch.nn.modules.module.register_module_forward_pre_hook,
    )
    assert mine == theirs


@pytest.mark.parity
def test_parity_unused_input_and_input_without_grad() -> None:
    torch = pytest.importorskip("torch")

    def run(lib: Any) -> list[Any]:
        class UsesFirst(lib.nn.Module):
            def forward(self, a: Any, b: Any, c: Any, n: int) -> Any:
                return a * 2

        m = UsesFirst()
        seen: list[Any] = []
        m.register_full_backward_hook(
            lambda mod, gi, go: seen.append([None if g is None else g.tolist() for g in gi])
        )
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        c = lib.ones(2)
        m(a, b, c, 3).sum().backward()
        seen.append([a.grad.tolist(), b.grad.tolist()])
        return seen

    assert run(tl) == run(torch)


def _assert_close(a: Any, b: Any) -> None:
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (a, b)
        for p, q in zip(a, b, strict=True):
            _assert_close(p, q)
    elif isinstance(a, float):
        assert np.isclose(a, b, rtol=1e-4, atol=1e-4), (a, b)
    else:
        assert a == b, (a, b)


def test_unpickled_module_with_hooks_runs_them_in_a_fresh_process(tmp_path: Any) -> None:
    """The fast path's flag is per process: unpickling a module that has hooks must set it."""
    import subprocess
    import sys

    m = Scale(2.0)
    m.register_forward_pre_hook(_add_one)
    path = tmp_path / "m.pkl"
    path.write_bytes(pickle.dumps(m))
    here = str(Path(__file__).parent)
    assert Scale.__module__ == "test_module_hooks"  # what the pickle will import by name
    code = (
        f"import pickle, sys, tensorlib as tl; sys.path.insert(0, {here!r})\n"
        f"m = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        "print(m(tl.tensor([1.0])).tolist())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="."
    )
    assert out.stdout.strip() == "[4.0]"
