"""tensorlib.optim.lr_scheduler against torch.optim.lr_scheduler: 100 steps of every schedule.

The learning rates (and OneCycleLR's momentum) must be equal to PyTorch's, as Python floats
computed by the same formulas in the same order, and the state dicts must have the same keys
and values.
"""

from __future__ import annotations

import math

import pytest

import tensorlib as tl
from tensorlib import optim

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

STEPS = 100


def _optimizers(kind: str = "sgd", groups: int = 2):
    ours_params = [tl.nn.Parameter(tl.zeros(2)) for _ in range(groups)]
    theirs_params = [torch.nn.Parameter(torch.zeros(2)) for _ in range(groups)]
    lrs = [0.1, 0.03][:groups]
    if kind == "sgd":
        return (
            optim.SGD(
                [{"params": [p], "lr": lr} for p, lr in zip(ours_params, lrs, strict=True)],
                lr=0.1,
                momentum=0.9,
            ),
            torch.optim.SGD(
                [{"params": [p], "lr": lr} for p, lr in zip(theirs_params, lrs, strict=True)],
                lr=0.1,
                momentum=0.9,
            ),
        )
    return (
        optim.AdamW([{"params": [p], "lr": lr} for p, lr in zip(ours_params, lrs, strict=True)]),
        torch.optim.AdamW(
            [{"params": [p], "lr": lr} for p, lr in zip(theirs_params, lrs, strict=True)]
        ),
    )


def _lambda(epoch):
    return 0.97**epoch if epoch % 7 else 0.5


SCHEDULES = {
    "LambdaLR": lambda lib, o: lib.LambdaLR(o, _lambda),
    "LambdaLR-per-group": lambda lib, o: lib.LambdaLR(o, [_lambda, lambda e: 1 / (1 + e)]),
    "StepLR": lambda lib, o: lib.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda lib, o: lib.MultiStepLR(o, milestones=[10, 30, 30, 75], gamma=0.3),
    "ExponentialLR": lambda lib, o: lib.ExponentialLR(o, gamma=0.97),
    "LinearLR": lambda lib, o: lib.LinearLR(o, start_factor=0.05, end_factor=0.9, total_iters=40),
    "LinearLR-decay": lambda lib, o: lib.LinearLR(
        o, start_factor=1.0, end_factor=0.0, total_iters=100
    ),
    "CosineAnnealingLR": lambda lib, o: lib.CosineAnnealingLR(o, T_max=30, eta_min=0.001),
    "OneCycleLR": lambda lib, o: lib.OneCycleLR(o, max_lr=[1.0, 0.3], total_steps=STEPS),
    "OneCycleLR-linear-3phase": lambda lib, o: lib.OneCycleLR(
        o,
        max_lr=0.5,
        epochs=10,
        steps_per_epoch=10,
        anneal_strategy="linear",
        three_phase=True,
        pct_start=0.25,
    ),
    "SequentialLR-warmup-cosine": lambda lib, o: lib.SequentialLR(
        o,
        [lib.LinearLR(o, start_factor=0.01, total_iters=10), lib.CosineAnnealingLR(o, T_max=90)],
        milestones=[10],
    ),
    "SequentialLR-three": lambda lib, o: lib.SequentialLR(
        o,
        [lib.ExponentialLR(o, 0.9), lib.StepLR(o, 5, 0.5), lib.LinearLR(o, 0.5, 1.0, 20)],
        milestones=[20, 60],
    ),
    "ChainedScheduler": lambda lib, o: lib.ChainedScheduler(
        [lib.StepLR(o, 10, 0.5), lib.ExponentialLR(o, 0.98)]
    ),
}


def _snapshot(optimizer):
    return [(g["lr"], g.get("momentum"), g.get("betas")) for g in optimizer.param_groups]


@pytest.mark.parametrize("kind", ["sgd", "adamw"])
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_learning_rates_equal_torch_for_100_steps(name, kind):
    ours_opt, theirs_opt = _optimizers(kind)
    ours = SCHEDULES[name](optim.lr_scheduler, ours_opt)
    theirs = SCHEDULES[name](torch.optim.lr_scheduler, theirs_opt)
    assert ours.get_last_lr() == theirs.get_last_lr()
    for step in range(STEPS):
        ours_opt.step()
        theirs_opt.step()
        ours.step()
        theirs.step()
        assert ours.get_last_lr() == theirs.get_last_lr(), f"step {step + 1}"
        assert _snapshot(ours_opt) == _snapshot(theirs_opt), f"step {step + 1}"
    assert _plain(ours.state_dict()) == _plain(theirs.state_dict())


def test_two_schedulers_on_one_optimizer_compose_like_torch():
    ours_opt, theirs_opt = _optimizers()
    ours = [
        optim.lr_scheduler.LinearLR(ours_opt, 0.1, total_iters=10),
        optim.lr_scheduler.ExponentialLR(ours_opt, 0.95),
    ]
    theirs = [torch.optim.lr_scheduler.LinearLR(theirs_opt, 0.1, total_iters=10),
              torch.optim.lr_scheduler.ExponentialLR(theirs_opt, 0.95)]
    for step in range(STEPS):
        ours_opt.step()
        theirs_opt.step()
        for scheduler in ours + theirs:
            scheduler.step()
        assert _snapshot(ours_opt) == _snapshot(theirs_opt), f"step {step + 1}"


def _plain(state):
    """Torch's scheduler state dicts hold plain numbers too; compare them as such."""
    if isinstance(state, dict):
        return {k: _plain(v) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return [_plain(v) for v in state]
    return state


@pytest.mark.parametrize(
    "name",
    [
        "StepLR",
        "CosineAnnealingLR",
        "OneCycleLR",
        "SequentialLR-warmup-cosine",
        "ChainedScheduler",
        "LambdaLR",
    ],
)
def test_resumed_schedule_continues_identically(name):
    opt, _ = _optimizers("adamw")
    scheduler = SCHEDULES[name](optim.lr_scheduler, opt)
    reference = []
    for _ in range(60):
        scheduler.step()
        reference.append(scheduler.get_last_lr())
    opt, _ = _optimizers("adamw")
    scheduler = SCHEDULES[name](optim.lr_scheduler, opt)
    for _ in range(25):
        scheduler.step()
    saved_opt, saved_sched = opt.state_dict(), scheduler.state_dict()
    fresh_opt, _ = _optimizers("adamw")
    fresh = SCHEDULES[name](optim.lr_scheduler, fresh_opt)
    fresh_opt.load_state_dict(saved_opt)
    fresh.load_state_dict(saved_sched)
    resumed = []
    for _ in range(35):
        fresh.step()
        resumed.append(fresh.get_last_lr())
    assert resumed == reference[25:]


def test_state_dicts_hold_no_functions():
    opt, _ = _optimizers()
    state = optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0).state_dict()
    assert state["lr_lambdas"] == [None, None]
    assert not any(callable(v) for v in state.values())


def test_cosine_closed_form():
    opt, _ = _optimizers(groups=1)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20, eta_min=0.01)
    for t in range(1, 21):
        scheduler.step()
        expected = 0.01 + 0.5 * (0.1 - 0.01) * (1 + math.cos(math.pi * t / 20))
        assert math.isclose(scheduler.get_last_lr()[0], expected, rel_tol=1e-12, abs_tol=1e-15)


def _torch_warmup_cosine(optimizer, warmup_steps: int, max_steps: int, eta_min: float = 0.0):
    """The same composition of PyTorch's schedulers as tensorlib's ``warmup_cosine``."""
    sched = torch.optim.lr_scheduler
    cosine = sched.CosineAnnealingLR(optimizer, T_max=max_steps - warmup_steps, eta_min=eta_min)
    if warmup_steps == 0:
        return cosine
    if warmup_steps == 1:
        warmup = sched.LinearLR(optimizer, start_factor=1.0, end_factor=1.0, total_iters=1)
    else:
        warmup = sched.LinearLR(
            optimizer, start_factor=1.0 / warmup_steps, end_factor=1.0, total_iters=warmup_steps - 1
        )
    return sched.SequentialLR(optimizer, [warmup, cosine], milestones=[warmup_steps])


@pytest.mark.parametrize("kind", ["sgd", "adamw"])
@pytest.mark.parametrize(
    ("warmup", "total"), [(0, 100), (1, 100), (2, 100), (10, 100), (99, 100), (1, 2)]
)
def test_warmup_cosine_equals_the_same_composition_in_torch(kind, warmup, total):
    ours_opt, theirs_opt = _optimizers(kind)
    ours = optim.warmup_cosine(ours_opt, warmup, total, eta_min=1e-4)
    theirs = _torch_warmup_cosine(theirs_opt, warmup, total, eta_min=1e-4)
    assert ours.get_last_lr() == theirs.get_last_lr()
    for step in range(total - 1):
        ours_opt.step()
        theirs_opt.step()
        ours.step()
        theirs.step()
        assert ours.get_last_lr() == theirs.get_last_lr(), f"step {step + 1}"
    assert _plain(ours.state_dict()) == _plain(theirs.state_dict())
