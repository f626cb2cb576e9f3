"""ConstantLR, MultiplicativeLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR and
ReduceLROnPlateau against torch.optim.lr_scheduler.

The learning rates (and CyclicLR's momentum or beta1) must be equal to PyTorch's as Python floats,
step by step, with two param groups; the state dicts must have the same keys and values; a
schedule restored from its state dict mid-run must continue identically; bad arguments raise.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import optim
from tensorlib.optim import lr_scheduler as ours_sched

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity
theirs_sched = torch.optim.lr_scheduler

STEPS = 100


def _optimizers(kind: str = "sgd"):
    ours_params = [tl.nn.Parameter(tl.zeros(2, dtype=tl.float64)) for _ in range(2)]
    theirs_params = [torch.nn.Parameter(torch.zeros(2, dtype=torch.float64)) for _ in range(2)]
    lrs = [0.1, 0.03]
    ours_groups = [{"params": [p], "lr": lr} for p, lr in zip(ours_params, lrs, strict=True)]
    theirs_groups = [{"params": [p], "lr": lr} for p, lr in zip(theirs_params, lrs, strict=True)]
    if kind == "sgd":
        return (optim.SGD(ours_groups, lr=0.1, momentum=0.9),
                torch.optim.SGD(theirs_groups, lr=0.1, momentum=0.9))
    return optim.AdamW(ours_groups), torch.optim.AdamW(theirs_groups)


class _Factor:
    """A callable object: its __dict__ is saved in a state dict (a lambda is saved as None)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def __call__(self, epoch: int) -> float:
        return self.rate if epoch % 3 else 1.0


def _lambda(epoch: int) -> float:
    return 0.97 if epoch % 5 else 1.05


SCHEDULES = {
    "ConstantLR": lambda lib, o: lib.ConstantLR(o, factor=0.25, total_iters=7),
    "ConstantLR-default": lambda lib, o: lib.ConstantLR(o),
    "MultiplicativeLR": lambda lib, o: lib.MultiplicativeLR(o, _lambda),
    "MultiplicativeLR-per-group": lambda lib, o: lib.MultiplicativeLR(
        o, [_lambda, lambda e: 0.99]
    ),
    "MultiplicativeLR-object": lambda lib, o: lib.MultiplicativeLR(o, _Factor(0.9)),
    "PolynomialLR": lambda lib, o: lib.PolynomialLR(o, total_iters=40, power=2.0),
    "PolynomialLR-default": lambda lib, o: lib.PolynomialLR(o),
    "PolynomialLR-sqrt": lambda lib, o: lib.PolynomialLR(o, total_iters=100, power=0.5),
    "WarmRestarts": lambda lib, o: lib.CosineAnnealingWarmRestarts(
        o, T_0=7, T_mult=2, eta_min=1e-3
    ),
    "WarmRestarts-1": lambda lib, o: lib.CosineAnnealingWarmRestarts(o, T_0=10),
    "WarmRestarts-3": lambda lib, o: lib.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=3),
    "CyclicLR": lambda lib, o: lib.CyclicLR(o, 0.01, [0.1, 0.2], step_size_up=7, step_size_down=5),
    "CyclicLR-triangular2": lambda lib, o: lib.CyclicLR(
        o, 0.01, 0.1, step_size_up=6, mode="triangular2"
    ),
    "CyclicLR-exp_range": lambda lib, o: lib.CyclicLR(
        o, [0.01, 0.02], 0.1, 4, 9, mode="exp_range", gamma=0.98,
        base_momentum=[0.7, 0.75], max_momentum=0.95,
    ),
    "CyclicLR-scale_fn": lambda lib, o: lib.CyclicLR(
        o, 0.01, 0.1, 5, scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations"
    ),
    "CyclicLR-no-momentum": lambda lib, o: lib.CyclicLR(
        o, 0.01, 0.1, 5, cycle_momentum=False, scale_fn=_Factor(0.5)
    ),
    "Chained-Constant-Poly": lambda lib, o: lib.ChainedScheduler(
        [lib.ConstantLR(o, 0.5, 10), lib.PolynomialLR(o, 60, 1.5)]
    ),
    "Sequential-Constant-Restarts": lambda lib, o: lib.SequentialLR(
        o, [lib.ConstantLR(o, 0.1, 5), lib.CosineAnnealingWarmRestarts(o, 10, 2)], milestones=[5]
    ),
}


def _snapshot(optimizer):
    return [(g["lr"], g.get("momentum"), g.get("betas")) for g in optimizer.param_groups]


def _plain(state):
    """Scheduler state dicts hold numbers, lists and dicts; compare them as such."""
    if isinstance(state, dict):
        return {k: _plain(v) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return [_plain(v) for v in state]
    return state


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's deprecation of step(epoch)
        yield


@pytest.mark.parametrize("kind", ["sgd", "adamw"])
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_learning_rates_equal_torch_for_100_steps(name, kind):
    ours_opt, theirs_opt = _optimizers(kind)
    ours = SCHEDULES[name](ours_sched, ours_opt)
    theirs = SCHEDULES[name](theirs_sched, theirs_opt)
    assert ours.get_last_lr() == theirs.get_last_lr()
    assert _snapshot(ours_opt) == _snapshot(theirs_opt)
    for step in range(STEPS):
        ours_opt.step()
        theirs_opt.step()
        ours.step()
        theirs.step()
        assert ours.get_last_lr() == theirs.get_last_lr(), f"step {step + 1}"
        assert _snapshot(ours_opt) == _snapshot(theirs_opt), f"step {step + 1}"
    assert _plain(ours.state_dict()) == _plain(theirs.state_dict())


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_resumed_schedule_continues_identically(name):
    opt, _ = _optimizers("adamw")
    scheduler = SCHEDULES[name](ours_sched, opt)
    reference = []
    for _ in range(60):
        scheduler.step()
        reference.append((scheduler.get_last_lr(), _snapshot(opt)))
    opt, _ = _optimizers("adamw")
    scheduler = SCHEDULES[name](ours_sched, opt)
    for _ in range(25):
        scheduler.step()
    saved_opt, saved_sched = opt.state_dict(), scheduler.state_dict()
    fresh_opt, _ = _optimizers("adamw")
    fresh = SCHEDULES[name](ours_sched, fresh_opt)
    fresh_opt.load_state_dict(saved_opt)
    fresh.load_state_dict(saved_sched)
    resumed = []
    for _ in range(35):
        fresh.step()
        resumed.append((fresh.get_last_lr(), _snapshot(fresh_opt)))
    assert resumed == reference[25:]


def test_a_torch_state_dict_loads_into_ours():
    ours_opt, theirs_opt = _optimizers()
    theirs = theirs_sched.CyclicLR(theirs_opt, 0.01, 0.1, 5, mode="triangular2")
    ours = ours_sched.CyclicLR(ours_opt, 0.01, 0.1, 5, mode="triangular2")
    for _ in range(13):
        theirs_opt.step()
        theirs.step()
    ours_opt.load_state_dict(
        {"state": {}, "param_groups": theirs_opt.state_dict()["param_groups"]}
    )
    ours.load_state_dict(theirs.state_dict())
    for _ in range(20):
        ours.step()
        theirs.step()
        assert ours.get_last_lr() == theirs.get_last_lr()
        assert _snapshot(ours_opt) == _snapshot(theirs_opt)


@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_at_fractional_epochs(T_mult):
    ours_opt, theirs_opt = _optimizers()
    ours = ours_sched.CosineAnnealingWarmRestarts(ours_opt, 5, T_mult, eta_min=0.01)
    theirs = theirs_sched.CosineAnnealingWarmRestarts(theirs_opt, 5, T_mult, eta_min=0.01)
    for epoch in range(40):
        for batch in range(7):
            ours.step(epoch + batch / 7)
            theirs.step(epoch + batch / 7)
            assert ours.get_last_lr() == theirs.get_last_lr(), (epoch, batch)
        ours.step()  # interleaved: one epoch on from the last
        theirs.step()
        assert ours.get_last_lr() == theirs.get_last_lr()
    assert _plain(ours.state_dict()) == _plain(theirs.state_dict())


def test_warm_restarts_closed_form():
    opt, _ = _optimizers()
    scheduler = ours_sched.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2)
    starts = [0, 4, 12, 28, 60]  # periods 4, 8, 16, 32
    for epoch in range(1, 60):
        scheduler.step()
        start = max(s for s in starts if s <= epoch)
        period = 4 * 2 ** starts.index(start)
        expected = 0.05 * (1 + math.cos(math.pi * (epoch - start) / period))
        assert math.isclose(scheduler.get_last_lr()[0], expected, rel_tol=1e-12, abs_tol=1e-15)


PLATEAU = [
    dict(),
    dict(mode="max", factor=0.5, patience=2, threshold=0.01, threshold_mode="abs", cooldown=3,
         min_lr=[0.001, 0.002], eps=1e-3),
    dict(patience=0, cooldown=1, min_lr=0.005),
    dict(mode="max", patience=3),
    dict(threshold_mode="abs", threshold=0.1, patience=1, factor=0.3),
    dict(factor=0.0, patience=4),
]


@pytest.mark.parametrize(
    "options", PLATEAU, ids=lambda o: ",".join(map(str, o.items())) or "defaults"
)
def test_reduce_on_plateau_equals_torch(options):
    rng = np.random.default_rng(0)
    ours_opt, theirs_opt = _optimizers()
    ours = ours_sched.ReduceLROnPlateau(ours_opt, **options)
    theirs = theirs_sched.ReduceLROnPlateau(theirs_opt, **options)
    assert ours.get_last_lr() == theirs.get_last_lr()
    for value in 5 + 0.1 * np.cumsum(rng.standard_normal(300)):
        metric = tl.tensor(value) if value > 5 else float(value)  # a 0-d tensor or a number
        ours.step(metric)
        theirs.step(float(value))
        assert ours.get_last_lr() == theirs.get_last_lr()
        assert _plain(ours.state_dict()) == _plain(theirs.state_dict())


def test_reduce_on_plateau_resumes_and_loads_torch_state():
    ours_opt, theirs_opt = _optimizers()
    options = dict(mode="max", patience=2, cooldown=2, factor=0.5)
    theirs = theirs_sched.ReduceLROnPlateau(theirs_opt, **options)
    values = [1.0, 1.1, 1.05, 1.0, 0.9, 1.2, 1.1, 1.1, 1.1, 1.0] * 4
    for value in values[:15]:
        theirs.step(value)
    ours_opt.load_state_dict({"state": {}, "param_groups": theirs_opt.state_dict()["param_groups"]})
    ours = ours_sched.ReduceLROnPlateau(ours_opt)  # other options: the state dict brings them
    ours.load_state_dict(theirs.state_dict())
    assert ours.mode_worse == -math.inf
    for value in values[15:]:
        ours.step(value)
        theirs.step(value)
        assert ours.get_last_lr() == theirs.get_last_lr()


def test_reduce_on_plateau_added_group():
    opt, _ = _optimizers()
    scheduler = ours_sched.ReduceLROnPlateau(opt, patience=0, min_lr=0.001)
    opt.add_param_group({"params": [tl.nn.Parameter(tl.zeros(1, dtype=tl.float64))], "lr": 0.5})
    scheduler.step(1.0)
    scheduler.step(2.0)
    assert scheduler.get_last_lr() == pytest.approx([0.01, 0.003, 0.05])
    listed = ours_sched.ReduceLROnPlateau(_optimizers()[0], patience=0, min_lr=[0.0, 0.0])
    listed.optimizer.add_param_group({"params": [tl.nn.Parameter(tl.zeros(1))]})
    listed.step(1.0)
    with pytest.raises(RuntimeError, match="number of param groups"):
        listed.step(2.0)


def _opt():
    return _optimizers()[0]


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: ours_sched.ConstantLR(_opt(), factor=1.5), ValueError, "between 0 and 1"),
        (lambda: ours_sched.ConstantLR(_opt(), total_iters=0), ValueError, "total_iters"),
        (lambda: ours_sched.PolynomialLR(_opt(), total_iters=0), ValueError, "total_iters"),
        (lambda: ours_sched.MultiplicativeLR(_opt(), 0.9), TypeError, "callable"),
        (lambda: ours_sched.MultiplicativeLR(_opt(), [_lambda]), ValueError, "Expected 2"),
        (lambda: ours_sched.CosineAnnealingWarmRestarts(_opt(), 0), ValueError, "T_0"),
        (lambda: ours_sched.CosineAnnealingWarmRestarts(_opt(), 2.5), ValueError, "T_0"),
        (lambda: ours_sched.CosineAnnealingWarmRestarts(_opt(), 5, 0), ValueError, "T_mult"),
        (lambda: ours_sched.CosineAnnealingWarmRestarts(_opt(), 5, 1.5), ValueError, "T_mult"),
        (lambda: ours_sched.CosineAnnealingWarmRestarts(_opt(), 5, eta_min="0"), ValueError,
         "eta_min"),
        (lambda: ours_sched.CosineAnnealingWarmRestarts(_opt(), 5).step(-1), ValueError,
         "non-negative epoch"),
        (lambda: ours_sched.CyclicLR(_opt(), 0.01, 0.1, mode="square"), ValueError, "mode"),
        (lambda: ours_sched.CyclicLR(_opt(), [0.01], 0.1), ValueError, "base_lr"),
        (lambda: ours_sched.CyclicLR(_opt(), 0.01, 0.1, step_size_up=0), ValueError, "positive"),
        (lambda: ours_sched.CyclicLR(optim.Adagrad([tl.nn.Parameter(tl.zeros(1))]), 0.01, 0.1),
         ValueError, "momentum or beta1"),
        (lambda: ours_sched.CyclicLR("sgd", 0.01, 0.1), TypeError, "not an Optimizer"),
        (lambda: ours_sched.ReduceLROnPlateau(_opt(), factor=1.0), ValueError, "Factor"),
        (lambda: ours_sched.ReduceLROnPlateau(_opt(), mode="up"), ValueError, "mode"),
        (lambda: ours_sched.ReduceLROnPlateau(_opt(), threshold_mode="pct"), ValueError,
         "threshold mode"),
        (lambda: ours_sched.ReduceLROnPlateau(_opt(), min_lr=[0.1]), ValueError, "min_lrs"),
        (lambda: ours_sched.ReduceLROnPlateau("sgd"), TypeError, "not an Optimizer"),
        (lambda: ours_sched.ReduceLROnPlateau(_opt()).step("low"), ValueError, "could not convert"),
    ],
)
def test_bad_arguments_raise(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize("combinator", ["SequentialLR", "ChainedScheduler"])
def test_combinators_refuse_reduce_on_plateau(combinator):
    for lib in (ours_sched, theirs_sched):
        opt = _optimizers()[0 if lib is ours_sched else 1]
        schedulers = [lib.ReduceLROnPlateau(opt), lib.ConstantLR(opt)]
        with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
            if combinator == "SequentialLR":
                lib.SequentialLR(opt, schedulers, milestones=[3])
            else:
                lib.ChainedScheduler(schedulers)


def test_load_state_dict_refuses_other_keys():
    scheduler = ours_sched.ReduceLROnPlateau(_opt())
    with pytest.raises(ValueError, match="expected the keys"):
        scheduler.load_state_dict({"factor": 0.5})
    cyclic = ours_sched.CyclicLR(_opt(), 0.01, 0.1)
    state = cyclic.state_dict()
    del state["step_ratio"]
    with pytest.raises(ValueError, match="expected the keys"):
        cyclic.load_state_dict(state)
