"""The probe ``test_notebook_scratch_objects.py`` loads into a chapter's kernel (not a test module).

The test runs a chapter with a call of :meth:`Probe.after` after every cell. The probe

- records, for each class the chapter exports, the class object its name is first bound to in
  the notebook, and reports every later cell after which the name is bound to another one (a
  class re-created: objects made before keep the old class);
- records every call of ``types.new_class``;
- makes a learner's scratch object (a tensor, a generator, a module, an optimizer) as soon as
  the class it needs is defined and the object can be made;
- at the end (:meth:`Probe.finish`) checks that the early object can do everything one made
  now can, with the same results.

The kinds of scratch object are below (:data:`KINDS`); each lists operations ``op(obj, peer)``,
where ``peer`` is the other object (early for late, late for early), and the core operations
that must work on both.
"""

from __future__ import annotations

import copy
import json
import re
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

MARK = "TL-SCRATCH-REPORT "
Op = Callable[[Any, Any], Any]


def _user() -> dict[str, Any]:
    """The notebook's namespace."""
    return sys.modules["__main__"].__dict__


def _made_in_notebook(value: Any) -> bool:
    return isinstance(value, type) and not (
        str(getattr(value, "__module__", "")).startswith("tensorlib")
    )


def _plain(value: Any, obj: Any = None, peer: Any = None) -> Any:
    """A comparable form of an operation's result (tensors as lists, no addresses)."""
    if value is obj:
        return "<the object itself>"
    if value is peer and peer is not None:
        return "<the other object>"
    if isinstance(value, np.ndarray):
        return ["ndarray", str(value.dtype), value.tolist()]
    if hasattr(value, "tolist") and hasattr(value, "shape") and hasattr(value, "dtype"):
        return [type(value).__name__, str(value.dtype), value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_plain(item, obj, peer) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item, obj, peer) for key, item in value.items()}
    if isinstance(value, (bool, int, float, str, type(None))):
        return value
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))


def _no_grad(g: dict[str, Any]) -> Any:
    import tensorlib

    return g.get("no_grad", tensorlib.no_grad)()


# -- the kinds of scratch object
# ---------------------------------------------------------------------------
def _tensor_backward(x: Any, peer: Any) -> Any:
    (x * x).sum().backward()
    grad = x.grad
    x.grad = None
    return grad


def _tensor_add_(x: Any, peer: Any) -> Any:
    with _no_grad(_user()):
        x.add_(1.0)
    return x


def _tensor_ops(g: dict[str, Any]) -> dict[str, Op]:
    ops: dict[str, Op] = {
        "x * x": lambda x, p: x * x,
        "x + x": lambda x, p: x + x,
        "x - 1.0 / x": lambda x, p: x - 1.0 / x,
        "x ** 2": lambda x, p: x**2,
        "-x": lambda x, p: -x,
        "x @ x": lambda x, p: x @ x,
        "x > 1.5": lambda x, p: x > 1.5,
        "x * (the other tensor)": lambda x, p: x * p,
        "(the other tensor) + x": lambda x, p: p + x,
        "x[0]": lambda x, p: x[0],
        "x[1:]": lambda x, p: x[1:],
        "(x * x).sum().backward()": _tensor_backward,
        "x.sum()": lambda x, p: x.sum(),
        "x.mean()": lambda x, p: x.mean(),
        "x.max()": lambda x, p: x.max(),
        "x.exp()": lambda x, p: x.exp(),
        "x.log()": lambda x, p: x.log(),
        "x.tanh()": lambda x, p: x.tanh(),
        "x.relu()": lambda x, p: x.relu(),
        "x.softmax(0)": lambda x, p: x.softmax(0),
        "x.reshape(2, 1)": lambda x, p: x.reshape(2, 1),
        "x.unsqueeze(0)": lambda x, p: x.unsqueeze(0),
        "x.expand(3, 2)": lambda x, p: x.expand(3, 2),
        "x.detach()": lambda x, p: x.detach(),
        "x.clone()": lambda x, p: x.clone(),
        "x.double()": lambda x, p: x.double(),
        "x.numpy()": lambda x, p: x.detach().numpy(),
        "x.tolist()": lambda x, p: x.tolist(),
        "x[0].item()": lambda x, p: x[0].item(),
        "x.shape": lambda x, p: tuple(x.shape),
        "x.dtype": lambda x, p: str(x.dtype),
        "x.requires_grad": lambda x, p: x.requires_grad,
        "x.is_leaf": lambda x, p: x.is_leaf,
        "repr(x)": lambda x, p: repr(x),
        "np.add(x, 1.0)": lambda x, p: np.add(x, 1.0),
    }
    for name, call in {
        "tensor(x)": lambda f, x: f(x.detach()),
        "where(x > 1.5, x, 0.0)": lambda f, x: f(x > 1.5, x, 0.0),
        "stack([x, x])": lambda f, x: f([x, x]),
        "cat([x, x])": lambda f, x: f([x, x]),
    }.items():
        function = g.get(name.split("(")[0])
        if callable(function):
            ops[name] = lambda x, p, f=function, c=call: c(f, x)
    ops["x.add_(1.0) under no_grad"] = _tensor_add_  # last: it changes x
    return ops


def _make_tensor(g: dict[str, Any]) -> Any:
    return g["tensor"]([1.0, 2.0], requires_grad=True)


def _generator_ops(g: dict[str, Any]) -> dict[str, Op]:
    ops: dict[str, Op] = {
        "initial_seed()": lambda x, p: x.initial_seed(),
        "manual_seed(3)": lambda x, p: x.manual_seed(3),
        "get_state()": lambda x, p: x.get_state(),
        "set_state(get_state())": lambda x, p: x.set_state(x.get_state()),
        "repr(generator)": lambda x, p: repr(x),
        "copy.deepcopy(generator).initial_seed()": lambda x, p: copy.deepcopy(x).initial_seed(),
    }
    for name in ("rand", "randn"):
        if callable(g.get(name)):
            ops[f"{name}(3, generator=generator)"] = lambda x, p, f=g[name]: f(3, generator=x)
    if callable(g.get("randint")):
        ops["randint(0, 5, (4,), generator=generator)"] = (
            lambda x, p: g["randint"](0, 5, (4,), generator=x)
        )
    if callable(g.get("randperm")):
        ops["randperm(5, generator=generator)"] = lambda x, p: g["randperm"](5, generator=x)
    return ops


def _scratch_module_class(g: dict[str, Any]) -> type:
    import tensorlib

    module, parameter = g["Module"], g.get("Parameter", tensorlib.nn.Parameter)

    class Scratch(module):  # type: ignore[misc, valid-type]
        """A learner's tiny module: one parameter, forward multiplies by it."""

        def __init__(self) -> None:
            super().__init__()
            self.weight = parameter(tensorlib.ones(2))

        def forward(self, x: Any) -> Any:
            return x * self.weight

    return Scratch


def _module_backward(m: Any, peer: Any) -> Any:
    import tensorlib

    m(tensorlib.ones(2)).sum().backward()
    grads = [p.grad for p in m.parameters()]
    m.zero_grad()
    return [grads, [p.grad for p in m.parameters()]]


def _module_add_child(m: Any, peer: Any) -> Any:
    import tensorlib

    m.child = _user()["Linear"](2, 3)
    with tensorlib.no_grad():  # the same values in the early and the late module
        for parameter in m.child.parameters():
            parameter.fill_(0.5)
    return [
        [name for name, _ in m.named_children()],
        [tuple(p.shape) for p in m.parameters()],
        list(m.state_dict()),
    ]


def _module_ops(g: dict[str, Any]) -> dict[str, Op]:
    import tensorlib

    ops: dict[str, Op] = {
        "parameters()": lambda m, p: list(m.parameters()),
        "named_parameters()": lambda m, p: [name for name, _ in m.named_parameters()],
        "state_dict()": lambda m, p: m.state_dict(),
        "load_state_dict(state_dict())": lambda m, p: m.load_state_dict(m.state_dict()),
        "m(x)": lambda m, p: m(tensorlib.ones(2)),
        "m(x).sum().backward(), zero_grad()": _module_backward,
        "train(False).training": lambda m, p: m.train(False).training,
        "eval(), train()": lambda m, p: [m.eval().training, m.train().training],
        "register_buffer(...), buffers()": lambda m, p: [
            m.register_buffer("counts", tensorlib.zeros(2)),
            list(m.buffers()),
        ],
        "modules()": lambda m, p: len(list(m.modules())),
        "apply(fn)": lambda m, p: m.apply(lambda module: None) is m,
        "requires_grad_(False)": lambda m, p: [
            m.requires_grad_(False) is m,
            [q.requires_grad for q in m.parameters()],
        ],
        "requires_grad_(True)": lambda m, p: [
            m.requires_grad_(True) is m,
            [q.requires_grad for q in m.parameters()],
        ],
        "repr(m)": lambda m, p: repr(m),
        "copy.deepcopy(m).state_dict()": lambda m, p: copy.deepcopy(m).state_dict(),
        "to(float64)": lambda m, p: [m.to(tensorlib.float64) is m, str(m.weight.dtype)],
        "to(float32)": lambda m, p: [m.to(dtype=tensorlib.float32) is m, str(m.weight.dtype)],
    }
    if callable(g.get("Linear")):
        ops["m.child = Linear(2, 3)"] = _module_add_child
        ops["repr(m) with a child"] = lambda m, p: repr(m)
    return ops


def _make_module(g: dict[str, Any]) -> Any:
    return _scratch_module_class(g)()


def _optimizer_step(opt: Any, peer: Any) -> Any:
    (param,) = opt.param_groups[0]["params"]
    opt.zero_grad()
    (param * param).sum().backward()
    opt.step()
    return param


def _optimizer_add_group(opt: Any, peer: Any) -> Any:
    import tensorlib

    opt.add_param_group({"params": [tensorlib.nn.Parameter(tensorlib.zeros(1))], "lr": 0.5})
    return [len(opt.param_groups), opt.param_groups[1]["lr"]]


def _optimizer_scheduled(opt: Any, peer: Any) -> Any:
    scheduler = _user()["StepLR"](opt, step_size=1, gamma=0.5)
    _optimizer_step(opt, peer)
    scheduler.step()
    return [group["lr"] for group in opt.param_groups]


def _optimizer_ops(g: dict[str, Any]) -> dict[str, Op]:
    ops: dict[str, Op] = {
        "step()": _optimizer_step,
        "step() again": _optimizer_step,
        "state_dict()": lambda o, p: o.state_dict(),
        "load_state_dict(state_dict())": lambda o, p: [
            o.load_state_dict(o.state_dict()),
            o.state_dict(),
        ],
        "zero_grad()": lambda o, p: [
            o.zero_grad(),
            [q.grad for group in o.param_groups for q in group["params"]],
        ],
        "param_groups[0]['lr']": lambda o, p: o.param_groups[0]["lr"],
        "repr(optimizer)": lambda o, p: repr(o),
        "add_param_group(...)": _optimizer_add_group,
    }
    if callable(g.get("StepLR")):
        ops["StepLR(optimizer).step()"] = _optimizer_scheduled
    return ops


def _make_optimizer(g: dict[str, Any]) -> Any:
    import tensorlib

    return g["SGD"]([tensorlib.nn.Parameter(tensorlib.ones(2))], lr=0.1, momentum=0.9)


class Kind:
    """A kind of scratch object: made once ``needs`` is defined; ``core`` operations must work.

    ``depth``: the early and the late object's classes must agree from that place in the MRO on
    (a scratch Module is a new subclass each time it is made: its base must be the same ``Module``).
    """

    def __init__(
        self,
        label: str,
        needs: str,
        make: Callable[[dict[str, Any]], Any],
        ops: Callable[[dict[str, Any]], dict[str, Op]],
        core: tuple[str, ...],
        base: str,
        depth: int = 0,
    ) -> None:
        self.label, self.needs, self.make, self.ops, self.core, self.base = (
            label,
            needs,
            make,
            ops,
            core,
            base,
        )
        self.depth = depth  # how far up the MRO the early and the late object must share a class


KINDS = {
    "tensor": Kind(
        "Tensor",
        "Tensor",
        _make_tensor,
        _tensor_ops,
        ("x * x", "(x * x).sum().backward()", "x[0]", "x.add_(1.0) under no_grad"),
        "Tensor",
    ),
    "generator": Kind(
        "Generator",
        "Generator",
        lambda g: g["Generator"](0),
        _generator_ops,
        ("manual_seed(3)", "get_state()", "initial_seed()"),
        "Generator",
    ),
    "module": Kind(
        "Module",
        "Module",
        _make_module,
        _module_ops,
        ("parameters()", "state_dict()", "to(float64)", "repr(m)", "m(x)"),
        "Module",
        depth=1,
    ),
    "optimizer": Kind(
        "optimizer (SGD)",
        "SGD",
        _make_optimizer,
        _optimizer_ops,
        ("step()", "state_dict()", "load_state_dict(state_dict())", "zero_grad()"),
        "Optimizer",
    ),
}


def _run(op: Op, obj: Any, peer: Any) -> tuple[bool, Any]:
    try:
        return True, _plain(op(obj, peer), obj, peer)
    except Exception as error:  # noqa: BLE001 - the probe reports whatever goes wrong
        return False, f"{type(error).__name__}: {error}"


class Probe:
    """What the test's injected cells call; see the module docstring."""

    def __init__(self, exported: list[str], kinds: list[str], labels: dict[int, str]) -> None:
        self.exported, self.labels = exported, labels
        self.kinds = [KINDS[kind] for kind in kinds]
        self.first: dict[str, tuple[int, type]] = {}
        self.rebound: list[str] = []
        self.new_class_calls: list[str] = []
        self.early: dict[str, tuple[int, Any]] = {}
        self.could_not_make: dict[str, str] = {}
        self.problems: dict[str, list[str]] = {}
        self.late: dict[str, Any] = {}
        self.cell = 0
        original = types.new_class

        def recording_new_class(name: str, *args: Any, **kwargs: Any) -> type:
            self.new_class_calls.append(
                f"{self._where(self.cell)} calls types.new_class({name!r}, ...)"
            )
            return original(name, *args, **kwargs)

        # the probe records each call
        types.new_class = recording_new_class  # type: ignore[assignment]

    def _where(self, cell: int) -> str:
        return f"cell {cell} (`{self.labels.get(cell, '?')}`)"

    def before(self, cell: int) -> None:
        """The chapter's cell ``cell`` (numbered from 1) runs next."""
        self.cell = cell

    def after(self, cell: int, *, rerun: bool = False) -> None:
        """Check the bindings of the exported class names after ``cell``, and make the scratch
        objects that can be."""
        g = _user()
        for name in self.exported:
            value = g.get(name)
            if not _made_in_notebook(value):
                continue
            if name not in self.first:
                self.first[name] = (cell, value)
            elif value is not self.first[name][1] and not rerun:
                before = self.first[name][0]
                self.rebound.append(
                    f"{self._where(cell)} binds `{name}` to a new class object, replacing the one "
                    f"{self._where(before)} made: objects made before keep the old class"
                )
                self.first[name] = (cell, value)  # report each re-creation once
        for kind in self.kinds:
            if kind.label in self.early or kind.needs not in self.first or rerun:
                continue
            try:
                self.early[kind.label] = (cell, kind.make(g))
            except Exception as error:  # noqa: BLE001 - not yet makeable: try after the next cell
                self.could_not_make[kind.label] = f"{type(error).__name__}: {error}"

    def finish(self, stage: str, *, rerun: bool = False) -> None:
        """Compare each early scratch object with one made now; ``stage`` says when, in the
        messages.

        After a re-run (``rerun``), the early objects are compared with the late ones made at the
        first call, which have been through the same operations since.
        """
        g = _user()
        problems = self.problems.setdefault(stage, [])
        for kind in self.kinds:
            if kind.label not in self.early:
                reason = self.could_not_make.get(
                    kind.label, f"`{kind.needs}` was never defined in the notebook"
                )
                problems.append(f"no early {kind.label} could be made ({reason})")
                continue
            cell, early = self.early[kind.label]
            where = f"a {kind.label} made after {self._where(cell)}"
            try:
                late = self.late[kind.label] if rerun else kind.make(g)
            except Exception as error:  # noqa: BLE001
                problems.append(f"a {kind.label} cannot be made: {type(error).__name__}: {error}")
                continue
            self.late[kind.label] = late
            base = g.get(kind.base)
            if type(early).__mro__[kind.depth] is not type(late).__mro__[kind.depth]:
                problems.append(
                    f"{where} has another class than one made now: "
                    f"type(early){'.__base__' * kind.depth} is not "
                    f"type(late){'.__base__' * kind.depth}"
                )
            if not rerun and isinstance(base, type) and not isinstance(early, base):
                problems.append(
                    f"{where} is not an instance of the notebook's `{kind.base}` any more"
                )
            missing = sorted(n for n in set(dir(late)) - set(dir(early)) if not n.startswith("_"))
            if missing:
                problems.append(f"{where} lacks {missing[:12]}, which one made now has")
            ops = kind.ops(g)
            for name in kind.core:
                if name not in ops:
                    problems.append(f"the probe has no operation {name!r} for a {kind.label}")
            for name, op in ops.items():
                late_ok, late_result = _run(op, late, early)
                early_ok, early_result = _run(op, early, late)
                if not late_ok and name in kind.core:
                    problems.append(f"`{name}` fails on a {kind.label} made now: {late_result}")
                elif late_ok and not early_ok:
                    problems.append(
                        f"`{name}` fails on {where} ({early_result}); it works on one made now"
                    )
                elif late_ok and early_result != late_result:
                    problems.append(
                        f"`{name}` gives {early_result!r:.200} on {where}, {late_result!r:.200} on "
                        "one made now"
                    )

    def report(self) -> None:
        """Print everything found, as one JSON line after :data:`MARK`."""
        found = {
            "rebound": self.rebound,
            "new_class": self.new_class_calls,
            "problems": self.problems,
            "early": {label: cell for label, (cell, _) in self.early.items()},
            "first": {name: cell for name, (cell, _) in self.first.items()},
        }
        print(MARK + json.dumps(found))
