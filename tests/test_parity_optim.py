"""Parity of tensorlib.optim with torch.optim: 20 steps of a small model, every option combination.

Both libraries train the same two-layer model on the same batches; after every step the
parameters and every state tensor must agree within float32 tolerance.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import optim

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

SHAPES = [(5, 3), (5,), (2, 5), (2,)]
STEPS = 20


def _init(seed: int = 0, dtype=np.float32) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(0.5 * rng.standard_normal(shape)).astype(dtype) for shape in SHAPES]


def _batches(seed: int = 1, dtype=np.float32) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((8, 3)).astype(dtype), rng.standard_normal((8, 2)).astype(dtype)) for _ in range(STEPS)]


def _loss(lib, params, x, y):
    w1, b1, w2, b2 = params
    hidden = lib.tanh(x @ w1.T + b1)
    out = hidden @ w2.T + b2
    diff = out - y
    return (diff * diff).mean()


def run_pair(make_ours, make_theirs, *, steps: int = STEPS, dtype=np.float32, check_state: bool = True,
             rtol: float = 1e-5, atol: float = 1e-6, scheduler=None):
    """Train both; assert parameters and state agree after every step."""
    init = _init(dtype=dtype)
    ours = [tl.nn.Parameter(tl.tensor(a.copy())) for a in init]
    theirs = [torch.nn.Parameter(torch.tensor(a.copy())) for a in init]
    opt_ours, opt_theirs = make_ours(ours), make_theirs(theirs)
    for step, (x, y) in enumerate(_batches(dtype=dtype)[:steps]):
        opt_ours.zero_grad()
        opt_theirs.zero_grad()
        _loss(tl, ours, tl.tensor(x), tl.tensor(y)).backward()
        _loss(torch, theirs, torch.tensor(x), torch.tensor(y)).backward()
        opt_ours.step()
        opt_theirs.step()
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"parameter {index} after step {step + 1}")
        if check_state:
            sd_ours, sd_theirs = opt_ours.state_dict(), opt_theirs.state_dict()
            assert sd_ours["state"].keys() == sd_theirs["state"].keys()
            for index, entry in sd_theirs["state"].items():
                assert list(sd_ours["state"][index]) == list(entry), (index, list(entry))
                for name, value in entry.items():
                    ours_value = sd_ours["state"][index][name]
                    assert isinstance(ours_value, tl.Tensor)
                    np.testing.assert_allclose(ours_value.data, value.numpy(), rtol=rtol, atol=atol,
                                               err_msg=f"state {name} of parameter {index} after step {step + 1}")
    return opt_ours, opt_theirs


ADAM_OPTIONS = list(itertools.product([0.0, 0.1], [False, True], [False, True]))


@pytest.mark.parametrize(("weight_decay", "amsgrad", "maximize"), ADAM_OPTIONS)
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_family_matches_torch(name, weight_decay, amsgrad, maximize):
    options = dict(lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)
    ours, theirs = run_pair(lambda p: getattr(optim, name)(p, **options),
                            lambda p: getattr(torch.optim, name)(p, **options))
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]


def test_adam_defaults_and_group_keys_match_torch():
    for name in ("Adam", "AdamW"):
        ours = getattr(optim, name)([tl.nn.Parameter(tl.zeros(2))])
        theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))])
        assert ours.state_dict() == {"state": {}, "param_groups": theirs.state_dict()["param_groups"]}
        assert ours.defaults == theirs.defaults


def test_adam_float64_matches_torch():
    run_pair(lambda p: optim.AdamW(p, lr=0.05), lambda p: torch.optim.AdamW(p, lr=0.05),
             dtype=np.float64, rtol=1e-12, atol=1e-13)


def test_adam_param_groups_match_torch():
    def groups(params):
        return [{"params": params[:2], "lr": 0.02}, {"params": params[2:], "weight_decay": 0.0, "betas": (0.5, 0.9)}]

    run_pair(lambda p: optim.AdamW(groups(p), lr=0.05), lambda p: torch.optim.AdamW(groups(p), lr=0.05))


def test_state_dict_loads_into_torch_and_back():
    """Our state_dict, converted tensor by tensor, is a valid torch state_dict (and the reverse)."""
    ours, theirs = run_pair(lambda p: optim.AdamW(p, lr=0.05), lambda p: torch.optim.AdamW(p, lr=0.05), steps=5)
    converted = ours.state_dict()
    converted["state"] = {i: {k: torch.tensor(v.data) for k, v in e.items()} for i, e in converted["state"].items()}
    fresh = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(s)) for s in SHAPES], lr=0.05)
    fresh.load_state_dict(converted)
    assert fresh.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]
    back = theirs.state_dict()
    back["state"] = {i: {k: tl.tensor(v.numpy()) for k, v in e.items()} for i, e in back["state"].items()}
    mine = optim.AdamW([tl.nn.Parameter(tl.zeros(s)) for s in SHAPES], lr=0.05)
    mine.load_state_dict(back)
    assert mine.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]
