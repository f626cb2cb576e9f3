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
    return [
        (rng.standard_normal((8, 3)).astype(dtype), rng.standard_normal((8, 2)).astype(dtype))
        for _ in range(STEPS)
    ]


def _loss(lib, params, x, y):
    w1, b1, w2, b2 = params
    hidden = lib.tanh(x @ w1.T + b1)
    out = hidden @ w2.T + b2
    diff = out - y
    return (diff * diff).mean()


def run_pair(
    make_ours,
    make_theirs,
    *,
    steps: int = STEPS,
    dtype=np.float32,
    check_state: bool = True,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    scheduler=None,
):
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
            np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"parameter {index} after step {step + 1}")
        if check_state:
            sd_ours, sd_theirs = opt_ours.state_dict(), opt_theirs.state_dict()
            assert sd_ours["state"].keys() == sd_theirs["state"].keys()
            for index, entry in sd_theirs["state"].items():
                assert list(sd_ours["state"][index]) == list(entry), (index, list(entry))
                for name, value in entry.items():
                    ours_value = sd_ours["state"][index][name]
                    assert isinstance(ours_value, tl.Tensor)
                    np.testing.assert_allclose(
                        ours_value.numpy(),
                        value.numpy(),
                        rtol=rtol,
                        atol=atol,
                        err_msg=f"state {name} of parameter {index} after step {step + 1}",
                    )
    return opt_ours, opt_theirs


ADAM_OPTIONS = list(itertools.product([0.0, 0.1], [False, True], [False, True]))


@pytest.mark.parametrize(("weight_decay", "amsgrad", "maximize"), ADAM_OPTIONS)
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_family_matches_torch(name, weight_decay, amsgrad, maximize):
    options = dict(
        lr=0.05,
        betas=(0.8, 0.95),
        eps=1e-6,
        weight_decay=weight_decay,
        amsgrad=amsgrad,
        maximize=maximize,
    )
    ours, theirs = run_pair(lambda p: getattr(optim, name)(p, **options),
                            lambda p: getattr(torch.optim, name)(p, **options))
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]


def test_adam_defaults_and_group_keys_match_torch():
    for name in ("Adam", "AdamW"):
        ours = getattr(optim, name)([tl.nn.Parameter(tl.zeros(2))])
        theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))])
        assert ours.state_dict() == {
            "state": {},
            "param_groups": theirs.state_dict()["param_groups"],
        }
        assert ours.defaults == theirs.defaults


def test_adam_float64_matches_torch():
    run_pair(lambda p: optim.AdamW(p, lr=0.05), lambda p: torch.optim.AdamW(p, lr=0.05),
             dtype=np.float64, rtol=1e-12, atol=1e-13)


def test_adam_param_groups_match_torch():
    def groups(params):
        return [
            {"params": params[:2], "lr": 0.02},
            {"params": params[2:], "weight_decay": 0.0, "betas": (0.5, 0.9)},
        ]

    run_pair(
        lambda p: optim.AdamW(groups(p), lr=0.05), lambda p: torch.optim.AdamW(groups(p), lr=0.05)
    )


def test_state_dict_loads_into_torch_and_back():
    """Our state_dict, converted tensor by tensor, is a valid torch state_dict (and the reverse)."""
    ours, theirs = run_pair(
        lambda p: optim.AdamW(p, lr=0.05), lambda p: torch.optim.AdamW(p, lr=0.05), steps=5
    )
    converted = ours.state_dict()
    converted["state"] = {
        i: {k: torch.tensor(v.numpy()) for k, v in e.items()} for i, e in converted["state"].items()
    }
    fresh = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(s)) for s in SHAPES], lr=0.05)
    fresh.load_state_dict(converted)
    assert fresh.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]
    back = theirs.state_dict()
    back["state"] = {
        i: {k: tl.tensor(v.numpy()) for k, v in e.items()} for i, e in back["state"].items()
    }
    mine = optim.AdamW([tl.nn.Parameter(tl.zeros(s)) for s in SHAPES], lr=0.05)
    mine.load_state_dict(back)
    assert mine.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]


SGD_OPTIONS = [
    dict(momentum=m, dampening=d, nesterov=n, weight_decay=w, maximize=x)
    for m, d, n, w, x in itertools.product(
        [0.0, 0.9], [0.0, 0.3], [False, True], [0.0, 0.05], [False, True]
    )
    if not (n and (m == 0 or d != 0))
]


@pytest.mark.parametrize(
    "options", SGD_OPTIONS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items())
)
def test_sgd_matches_torch(options):
    ours, theirs = run_pair(
        lambda p: optim.SGD(p, lr=0.02, **options), lambda p: torch.optim.SGD(p, lr=0.02, **options)
    )
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]


RMSPROP_OPTIONS = [
    dict(momentum=m, centered=c, weight_decay=w, maximize=x)
    for m, c, w, x in itertools.product([0.0, 0.5], [False, True], [0.0, 0.05], [False, True])
]


@pytest.mark.parametrize(
    "options", RMSPROP_OPTIONS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items())
)
def test_rmsprop_matches_torch(options):
    ours, theirs = run_pair(
        lambda p: optim.RMSprop(p, lr=0.01, alpha=0.9, **options),
        lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, **options),
        rtol=2e-5,
        atol=2e-6,
    )
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]


ADAGRAD_OPTIONS = [
    dict(lr_decay=d, weight_decay=w, initial_accumulator_value=a, maximize=x)
    for d, w, a, x in itertools.product([0.0, 0.1], [0.0, 0.05], [0.0, 0.1], [False, True])
]


@pytest.mark.parametrize(
    "options", ADAGRAD_OPTIONS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items())
)
def test_adagrad_matches_torch(options):
    ours, theirs = run_pair(lambda p: optim.Adagrad(p, lr=0.1, **options),
                            lambda p: torch.optim.Adagrad(p, lr=0.1, **options))
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]


def test_adagrad_state_exists_from_construction_like_torch():
    ours = optim.Adagrad([tl.nn.Parameter(tl.zeros(2))], initial_accumulator_value=0.5)
    theirs = torch.optim.Adagrad(
        [torch.nn.Parameter(torch.zeros(2))], initial_accumulator_value=0.5
    )
    a, b = ours.state_dict(), theirs.state_dict()
    assert list(a["state"][0]) == list(b["state"][0]) == ["step", "sum"]
    assert a["state"][0]["step"].item() == 0.0 and np.all(a["state"][0]["sum"].numpy() == 0.5)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Muon"])
def test_defaults_and_group_keys_match_torch(name):
    ours = getattr(optim, name)([tl.nn.Parameter(tl.zeros(2, 2))])
    theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2, 2))])
    assert list(ours.defaults.items()) == list(theirs.defaults.items())
    assert list(ours.param_groups[0]) == list(theirs.param_groups[0])
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]


def test_params_without_grad_and_mixed_steps_match_torch():
    """Some parameters skip steps: the per-parameter path, with different step counts, still
    matches."""
    init = _init()
    ours = [tl.nn.Parameter(tl.tensor(a.copy())) for a in init]
    theirs = [torch.nn.Parameter(torch.tensor(a.copy())) for a in init]
    opt_ours, opt_theirs = optim.AdamW(ours, lr=0.05), torch.optim.AdamW(theirs, lr=0.05)
    rng = np.random.default_rng(3)
    for step in range(12):
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            if step % (index + 2) == 1:
                a.grad, b.grad = None, None
            else:
                g = rng.standard_normal(a.shape).astype(np.float32)
                a.grad, b.grad = tl.tensor(g), torch.tensor(g)
        opt_ours.step()
        opt_theirs.step()
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    steps = [opt_ours.state[p]["step"].item() for p in ours]
    assert steps == [opt_theirs.state[p]["step"].item() for p in theirs] and len(set(steps)) > 1


# -- Muon: PyTorch orthogonalises in bfloat16, we in float32 --------------------------------
MUON_SHAPES = [(6, 4), (3, 7)]


def _muon_pair(options, patch_float32, monkeypatch, steps=STEPS, rtol=1e-4, atol=1e-5):
    if patch_float32:  # PyTorch's own iteration with the bfloat16 cast removed
        from torch.optim import _muon

        def float32_newtonschulz(grad, ns_coefficients, ns_steps, eps):
            a, b, c = ns_coefficients
            x = grad.float()
            if grad.size(0) > grad.size(1):
                x = x.T
            x = x / x.norm().clamp(min=eps)
            for _ in range(ns_steps):
                gram = x @ x.T
                x = torch.addmm(x, torch.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
            return x.T if grad.size(0) > grad.size(1) else x

        monkeypatch.setattr(_muon, "_zeropower_via_newtonschulz", float32_newtonschulz)
    rng = np.random.default_rng(0)
    init = [(0.5 * rng.standard_normal(s)).astype(np.float32) for s in MUON_SHAPES]
    ours = [tl.nn.Parameter(tl.tensor(a.copy())) for a in init]
    theirs = [torch.nn.Parameter(torch.tensor(a.copy())) for a in init]
    opt_ours, opt_theirs = optim.Muon(ours, **options), torch.optim.Muon(theirs, **options)
    for step in range(steps):
        for a, b in zip(ours, theirs, strict=True):
            g = rng.standard_normal(a.shape).astype(np.float32)
            a.grad, b.grad = tl.tensor(g), torch.tensor(g)
        opt_ours.step()
        opt_theirs.step()
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(
                a.numpy(), b.detach().numpy(), rtol=rtol, atol=atol, err_msg=f"step {step + 1}"
            )
    return opt_ours, opt_theirs


MUON_OPTIONS = [
    dict(lr=0.02, nesterov=n, adjust_lr_fn=f, weight_decay=w, momentum=m)
    for n, f, w, m in itertools.product(
        [True, False], [None, "original", "match_rms_adamw"], [0.0, 0.1], [0.95, 0.5]
    )
]


@pytest.mark.parametrize(
    "options", MUON_OPTIONS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items())
)
def test_muon_matches_torch_with_float32_orthogonalisation(options, monkeypatch):
    ours, theirs = _muon_pair(options, True, monkeypatch)
    a, b = ours.state_dict(), theirs.state_dict()
    assert (
        a["param_groups"] == b["param_groups"]
        and list(a["state"][0]) == list(b["state"][0]) == ["momentum_buffer"]
    )
    np.testing.assert_allclose(
        a["state"][1]["momentum_buffer"].numpy(),
        b["state"][1]["momentum_buffer"].numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


def test_muon_against_torch_bfloat16_is_close_not_equal(monkeypatch):
    """bfloat16 keeps 8 bits of mantissa: one step differs by up to ~1% of the update."""
    _muon_pair(dict(lr=0.02), False, monkeypatch, steps=1, rtol=0, atol=0.02 * 0.02 * 1.5)


def test_zeropower_matches_torch_float32():
    from torch.optim import _muon

    g = np.random.default_rng(1).standard_normal((5, 8)).astype(np.float64)
    ours = optim.muon.zeropower_via_newtonschulz(g)
    x = torch.tensor(g)
    x = x / x.norm().clamp(min=1e-7)
    for _ in range(5):
        gram = x @ x.T
        x = torch.addmm(
            x, torch.addmm(gram, gram, gram, beta=-4.7750, alpha=2.0315), x, beta=3.4445
        )
    np.testing.assert_allclose(ours, x.numpy(), rtol=1e-10, atol=1e-12)
    assert _muon.DEFAULT_A == 3.4445 and _muon.EPS == 1e-7


# -- gradient clipping --------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    ours = [tl.nn.Parameter(tl.zeros(s)) for s in SHAPES]
    theirs = [torch.nn.Parameter(torch.zeros(s)) for s in SHAPES]
    for a, b, g in zip(ours, theirs, grads, strict=True):
        a.grad, b.grad = tl.tensor(g), torch.tensor(g)
    total_ours = tl.nn.utils.clip_grad_norm_(ours, max_norm, norm_type)
    total_theirs = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert total_ours.dtype == np.float32 and total_ours.shape == ()
    np.testing.assert_allclose(total_ours.item(), total_theirs.item(), rtol=1e-6)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_clip_grad_value_matches_torch():
    g = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    a, b = tl.nn.Parameter(tl.zeros(4, 5)), torch.nn.Parameter(torch.zeros(4, 5))
    a.grad, b.grad = tl.tensor(g), torch.tensor(g)
    tl.nn.utils.clip_grad_value_(a, 0.5)
    torch.nn.utils.clip_grad_value_(b, 0.5)
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
