"""The global module hooks of ``tensorlib.nn.modules.module`` (chapter 4, section 2.5): the
backward and full backward (pre-)hooks every module runs, and the parameter, buffer and module
registration hooks; their order against the module's own hooks, removal, errors, and parity with
``torch.nn.modules.module`` on the same module trees.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.nn.modules import module as module_module
from tensorlib.utils.hooks import RemovableHandle

NEW_FUNCTIONS = [
    "register_module_full_backward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]


@pytest.fixture(autouse=True)
def _fresh_backward_kind() -> Iterator[None]:
    """Each test may pick the kind of global backward hook anew (the flag is per process)."""
    before = module_module._global_is_full_backward_hook
    module_module._global_is_full_backward_hook = None
    yield
    module_module._global_is_full_backward_hook = before
    for name in ("_global_backward_hooks", "_global_backward_pre_hooks"):
        assert not getattr(module_module, name), f"a test left a hook in {name}"


class Scale(nn.Module):
    def __init__(self, factor: float = 2.0) -> None:
        super().__init__()
        self.factor = nn.Parameter(tl.tensor([factor]))

    def forward(self, x: Any) -> Any:
        return x * self.factor


def values(t: Any) -> Any:
    return None if t is None else np.asarray(t.detach().numpy()).tolist()


def test_a_torch_program_reaches_them_at_torchs_path(tmp_path: Any) -> None:
    script = tmp_path / "program.py"
    script.write_text(
        "import torch\n"
        "from torch.nn.modules.module import register_module_full_backward_hook\n"
        "seen = []\n"
        "h = torch.nn.modules.module.register_module_forward_hook(\n"
        "    lambda m, a, o: seen.append(type(m).__name__))\n"
        "g = register_module_full_backward_hook(lambda m, gi, go: seen.append('bw'))\n"
        "torch.nn.Linear(2, 2)(torch.ones(1, 2)).sum().backward()\n"
        "h.remove(); g.remove()\n"
        "print(seen)\n",
        encoding="utf-8",
    )
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-m", "tensorlib.run_as_torch", str(script)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": root}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['Linear', 'bw']"


def test_the_eight_functions_are_exported() -> None:
    for name in ["register_module_forward_pre_hook", "register_module_forward_hook",
                 *NEW_FUNCTIONS]:
        assert name in module_module.__all__
        assert callable(getattr(module_module, name)) and getattr(module_module, name).__doc__


def test_global_backward_hooks_run_before_the_modules_own_and_come_off() -> None:
    m = Scale(3.0)
    order: list[str] = []
    m.register_full_backward_pre_hook(lambda mod, go: order.append("own pre"))
    m.register_full_backward_hook(lambda mod, gi, go: order.append("own"))
    handles = [
        module_module.register_module_full_backward_pre_hook(
            lambda mod, go: order.append("global pre")),
        module_module.register_module_full_backward_hook(
            lambda mod, gi, go: order.append("global")),
    ]
    assert all(isinstance(h, RemovableHandle) for h in handles)
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    try:
        m(x).sum().backward()
    finally:
        for h in handles:
            h.remove()
    assert order == ["global pre", "own pre", "global", "own"]
    order.clear()
    m(x).sum().backward()
    assert order == ["own pre", "own"]


def test_global_backward_hooks_reach_a_module_without_hooks_and_can_replace_gradients() -> None:
    m = Scale(3.0)
    seen: list[Any] = []

    def pre(mod: Any, go: Any) -> Any:
        return (go[0] * 10,)

    def full(mod: Any, gi: Any, go: Any) -> Any:
        seen.append(([values(g) for g in gi], [values(g) for g in go]))
        return (gi[0] + 1,)

    x = tl.tensor([1.0], requires_grad=True)
    with module_module.register_module_full_backward_pre_hook(pre), \
            module_module.register_module_full_backward_hook(full):
        m(x).sum().backward()
    assert seen == [([[30.0]], [[10.0]])]
    assert values(x.grad) == [31.0]  # 1 * 10 * 3 + 1
    assert values(m.factor.grad) == [10.0]


def test_global_hook_kinds_cannot_mix_even_after_removal() -> None:
    module_module.register_module_full_backward_hook(lambda m, gi, go: None).remove()
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full "
                                           "backward hooks as a global Module hook"):
        module_module.register_module_backward_hook(lambda m, gi, go: None)
    module_module._global_is_full_backward_hook = None
    module_module.register_module_backward_hook(lambda m, gi, go: None).remove()
    with pytest.raises(RuntimeError, match="Please use only one of them"):
        module_module.register_module_full_backward_hook(lambda m, gi, go: None)


def test_deprecated_global_backward_hook_runs_as_a_full_one() -> None:
    m = Scale(2.0)
    seen: list[Any] = []
    x = tl.tensor([1.0, 1.0], requires_grad=True)
    with module_module.register_module_backward_hook(
        lambda mod, gi, go: seen.append((values(gi[0]), values(go[0])))
    ):
        m(x).sum().backward()
    assert seen == [([2.0, 2.0], [1.0, 1.0])]


def test_non_callable_hooks_are_refused() -> None:
    for name in NEW_FUNCTIONS:
        with pytest.raises(TypeError, match=f"{name}: expected a callable hook, got int"):
            getattr(module_module, name)(3)
    assert module_module._global_is_full_backward_hook is None  # a refused hook claims nothing


def test_registration_hooks_see_every_registration_and_may_replace_the_value() -> None:
    log: list[tuple[str, str, str]] = []

    def seen(kind: str) -> Any:
        return lambda module, name, value: log.append((kind, name, type(value).__name__))

    handles = [
        module_module.register_module_parameter_registration_hook(seen("parameter")),
        module_module.register_module_buffer_registration_hook(seen("buffer")),
        module_module.register_module_module_registration_hook(seen("module")),
    ]
    try:
        m = nn.Module()
        m.w = nn.Parameter(tl.ones(2))
        m.register_parameter("absent", None)  # None: not the parameter hook
        m.w = None  # neither
        m.register_buffer("b", None)
        m.b = tl.zeros(1)
        m.register_buffer("c", tl.ones(1), persistent=False)
        m.child = nn.Identity()
        m.add_module("gone", None)
        m.child = None
    finally:
        for h in handles:
            h.remove()
    assert log == [
        ("parameter", "w", "Parameter"),
        ("buffer", "b", "NoneType"),
        ("buffer", "b", "Tensor"),
        ("buffer", "c", "Tensor"),
        ("module", "child", "Identity"),
        ("module", "gone", "NoneType"),
        ("module", "child", "NoneType"),
    ]
    assert "c" not in m.state_dict()
    log.clear()
    nn.Linear(2, 2)
    assert log == []


def test_registration_hooks_chain_their_results() -> None:
    def double(module: Any, name: str, param: Any) -> Any:
        return nn.Parameter(param.detach() * 2)

    def plus_one(module: Any, name: str, param: Any) -> Any:
        return nn.Parameter(param.detach() + 1)

    swap = nn.Tanh()
    with module_module.register_module_parameter_registration_hook(double), \
            module_module.register_module_parameter_registration_hook(plus_one), \
            module_module.register_module_module_registration_hook(lambda m, n, c: swap), \
            module_module.register_module_buffer_registration_hook(lambda m, n, b: b * 0):
        m = nn.Module()
        m.register_parameter("p", nn.Parameter(tl.ones(1)))  # (1 * 2) + 1
        m.q = nn.Parameter(tl.ones(1))
        m.register_buffer("b", tl.ones(2))
        m.add_module("c", nn.Identity())
    assert values(m.p) == [3.0] and values(m.q) == [3.0]
    assert values(m.b) == [0.0, 0.0] and m.c is swap
    assert isinstance(m.p, nn.Parameter) and list(dict(m.named_parameters())) == ["p", "q"]


def test_registration_hooks_leave_the_call_path_alone() -> None:
    """Only forward and backward hooks switch Module.__call__ off its one-test fast path."""
    code = (
        "from tensorlib.nn.modules import module as m\n"
        "m.register_module_buffer_registration_hook(lambda *a: None)\n"
        "m.register_module_module_registration_hook(lambda *a: None)\n"
        "m.register_module_parameter_registration_hook(lambda *a: None)\n"
        "before = m._hooks_registered\n"
        "m.register_module_full_backward_pre_hook(lambda *a: None).remove()\n"
        "print(before, m._hooks_registered)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False True"


# ----------------------------------------------------------------------------- parity


def _tree(lib: Any) -> Any:
    class Block(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = lib.nn.Linear(3, 3)
            self.act = lib.nn.Tanh()

        def forward(self, x: Any) -> Any:
            return self.act(self.fc(x)) + x

    lib.manual_seed(0)
    return lib.nn.Sequential(Block(), lib.nn.Linear(3, 2))


def _copy_weights(source: Any, target: Any) -> None:
    import torch

    with torch.no_grad():
        for (_, a), (_, b) in zip(source.named_parameters(), target.named_parameters(),
                                  strict=True):
            b.copy_(torch.tensor(a.detach().numpy()))


def _shapes(grads: Any) -> list[Any]:
    return [None if g is None else tuple(g.shape) for g in grads]


def _rounded(grads: Any) -> list[Any]:
    return [None if g is None else np.round(g.detach().numpy(), 5).tolist() for g in grads]


def _record(lib: Any, module_functions: Any, net: Any, x: Any) -> list[Any]:
    log: list[Any] = []
    own = net[1]
    own.register_full_backward_hook(lambda m, gi, go: log.append(("own", _rounded(gi))))
    own.register_full_backward_pre_hook(lambda m, go: log.append(("own pre", _rounded(go))))
    handles = [
        module_functions.register_module_forward_pre_hook(
            lambda m, a: log.append(("fpre", type(m).__name__))),
        module_functions.register_module_forward_hook(
            lambda m, a, o: log.append(("f", type(m).__name__, tuple(o.shape)))),
        module_functions.register_module_full_backward_pre_hook(
            lambda m, go: log.append(("gpre", type(m).__name__, _shapes(go), _rounded(go)))),
        module_functions.register_module_full_backward_hook(
            lambda m, gi, go: log.append(("g", type(m).__name__, _shapes(gi), _rounded(gi),
                                          _rounded(go)))),
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (net(x) * lib.arange(8.0).reshape(4, 2)).sum().backward()
    for h in handles:
        h.remove()
    log.append(("x.grad", _rounded([x.grad])))
    net(x).sum().backward()  # only the module's own hooks now
    log.append(("warnings", [str(w.message) for w in caught]))
    return log


@pytest.mark.parity
@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_parity_hook_order_and_arguments_on_a_tree(input_requires_grad: bool) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = _tree(tl), _tree(torch)
    _copy_weights(ours, theirs)
    x = np.linspace(-1.0, 1.0, 12).reshape(4, 3).astype(np.float32)
    mine = _record(tl, module_module, ours, tl.tensor(x, requires_grad=input_requires_grad))
    reference = _record(torch, torch.nn.modules.module, theirs,
                        torch.tensor(x, requires_grad=input_requires_grad))
    assert mine == reference
    assert any(entry[0] == "g" for entry in mine)


@pytest.mark.parity
def test_parity_global_hooks_that_replace_gradients() -> None:
    torch = pytest.importorskip("torch")

    def run(lib: Any, functions: Any, net: Any) -> list[Any]:
        handles = [
            functions.register_module_full_backward_pre_hook(
                lambda m, go: tuple(None if g is None else g * 2 for g in go)
                if isinstance(m, lib.nn.Linear) else None),
            functions.register_module_full_backward_hook(
                lambda m, gi, go: tuple(None if g is None else g + 1 for g in gi)
                if isinstance(m, lib.nn.Tanh) else None),
        ]
        x = lib.tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
        try:
            net(x).sum().backward()
        finally:
            for h in handles:
                h.remove()
        return [_rounded([x.grad])] + [_rounded([p.grad]) for p in net.parameters()]

    ours, theirs = _tree(tl), _tree(torch)
    _copy_weights(ours, theirs)
    assert run(tl, module_module, ours) == run(torch, torch.nn.modules.module, theirs)


@pytest.mark.parity
def test_parity_registration_hooks_while_building_models() -> None:
    torch = pytest.importorskip("torch")

    def run(lib: Any, functions: Any) -> list[Any]:
        log: list[Any] = []

        def note(kind: str) -> Any:
            return lambda m, n, v: log.append((kind, type(m).__name__, n, type(v).__name__))

        handles = [
            functions.register_module_parameter_registration_hook(note("parameter")),
            functions.register_module_buffer_registration_hook(note("buffer")),
            functions.register_module_module_registration_hook(note("module")),
        ]
        try:
            s = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3),
                                  lib.nn.Linear(3, 1, bias=False), lib.nn.LayerNorm(3),
                                  lib.nn.Conv1d(1, 1, 2), lib.nn.ModuleList([lib.nn.ReLU()]))
            s.register_buffer("b", None)
            s.b = lib.ones(1)
            s.add_module("z", None)
            s.z = None
            s[0].bias = None
            s.extra = lib.nn.Parameter(lib.zeros(1))
        finally:
            for h in handles:
                h.remove()
        return log

    assert run(tl, module_module) == run(torch, torch.nn.modules.module)


@pytest.mark.parity
def test_parity_mixing_message_and_with_kwargs_forward_hook() -> None:
    torch = pytest.importorskip("torch")
    messages = []
    for functions in (module_module, torch.nn.modules.module):
        handle = functions.register_module_full_backward_hook(lambda m, gi, go: None)
        handle.remove()
        try:
            functions.register_module_backward_hook(lambda m, gi, go: None)
        except RuntimeError as error:
            messages.append(str(error))
    module_module._global_is_full_backward_hook = None
    torch.nn.modules.module._global_is_full_backward_hook = None
    assert len(messages) == 2 and messages[0] == messages[1]

    def run(lib: Any, functions: Any) -> list[Any]:
        class Add(lib.nn.Module):
            def forward(self, x: Any, *, y: float = 0.0) -> Any:
                return x + y

        seen: list[Any] = []
        handle = functions.register_module_forward_hook(
            lambda m, args, kwargs, out: seen.append((sorted(kwargs), out.tolist())) or out * 2,
            with_kwargs=True,
        )
        try:
            result = Add()(lib.ones(1), y=2.0)
        finally:
            handle.remove()
        return [seen, result.tolist()]

    assert run(tl, module_module) == run(torch, torch.nn.modules.module)


@pytest.mark.parity
def test_parity_registration_hooks_in_containers_and_library_layers() -> None:
    torch = pytest.importorskip("torch")

    def run(lib: Any, functions: Any) -> list[Any]:
        log: list[Any] = []

        def note(kind: str) -> Any:
            return lambda m, n, v: log.append((kind, type(m).__name__, n, type(v).__name__))

        handles = [
            functions.register_module_parameter_registration_hook(note("parameter")),
            functions.register_module_buffer_registration_hook(note("buffer")),
            functions.register_module_module_registration_hook(note("module")),
        ]
        try:
            params = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(1))])
            params.append(lib.nn.Parameter(lib.ones(2)))
            lib.nn.ParameterDict({"a": lib.nn.Parameter(lib.ones(1))})
            lib.nn.ModuleDict({"x": lib.nn.ReLU()})
            modules = lib.nn.ModuleList()
            modules.append(lib.nn.ReLU())
            modules.insert(0, lib.nn.Tanh())
            lib.nn.Embedding(3, 2)
            lib.nn.BatchNorm2d(2, affine=False, track_running_stats=False)
            lib.nn.GRU(2, 3)
        finally:
            for h in handles:
                h.remove()
        return log

    mine = run(tl, module_module)
    assert mine == run(torch, torch.nn.modules.module) and len(mine) > 10
