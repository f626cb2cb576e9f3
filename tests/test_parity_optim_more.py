"""Parity of optim.Adamax, NAdam, RAdam, Rprop, ASGD and Adafactor with torch.optim, and their
state dicts.

A small model trained on the same batches from the same weights, 30 steps: parameters and every
state tensor compared after each step (float64: to rounding; float32: to float32 precision), with
every option; several param groups, parameters without gradients; state dicts with PyTorch's keys,
round-tripped mid-run and loaded from PyTorch's; bad arguments raise.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import optim

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

SHAPES = [(5, 3), (5,), (2, 5), (2,)]
STEPS = 30


def _init(seed: int = 0, dtype=np.float64) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(0.5 * rng.standard_normal(shape)).astype(dtype) for shape in SHAPES]


def _data(seed: int = 1, dtype=np.float64, count: int = STEPS):
    rng = np.random.default_rng(seed)
    return [
        (rng.standard_normal((8, 3)).astype(dtype), rng.standard_normal((8, 2)).astype(dtype))
        for _ in range(count)
    ]


def _loss(lib, params, x, y):
    w1, b1, w2, b2 = params
    out = lib.tanh(x @ w1.T + b1) @ w2.T + b2
    diff = out - y
    return (diff * diff).mean()


def _pair(arrays):
    ours = [tl.nn.Parameter(tl.tensor(a.copy())) for a in arrays]
    theirs = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in arrays]
    return ours, theirs


OPTIONS = {
    "Adamax": [
        dict(), dict(lr=0.05, betas=(0.8, 0.99)), dict(eps=1e-3, weight_decay=0.1),
        dict(maximize=True, lr=0.01), dict(weight_decay=0.01, maximize=True, betas=(0.5, 0.9)),
    ],
    "NAdam": [
        dict(), dict(lr=0.01, betas=(0.8, 0.99)), dict(weight_decay=0.1),
        dict(weight_decay=0.1, decoupled_weight_decay=True, lr=0.01),
        dict(momentum_decay=0.05, maximize=True), dict(momentum_decay=0.0, eps=1e-4),
    ],
    "RAdam": [
        dict(), dict(lr=0.01, betas=(0.8, 0.9)), dict(weight_decay=0.1),
        dict(weight_decay=0.1, decoupled_weight_decay=True, lr=0.02),
        dict(maximize=True, betas=(0.9, 0.5)), dict(eps=1e-3, betas=(0.0, 0.99)),
    ],
    "Rprop": [
        dict(), dict(lr=0.05, etas=(0.3, 1.5)), dict(step_sizes=(1e-3, 0.02)),
        dict(maximize=True, lr=0.001),
    ],
    "ASGD": [
        dict(), dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5), dict(weight_decay=0.1, t0=0),
        dict(maximize=True, lr=0.01, t0=10), dict(lr=0.1, lambd=0.1, t0=1e6, alpha=1.0),
    ],
    "Adafactor": [
        dict(), dict(lr=0.1, beta2_decay=-0.5), dict(eps=(1e-3, 1e-2), d=2.0),
        dict(weight_decay=0.1, maximize=True), dict(lr=0.5, eps=(None, 0.5)),
    ],
}
CASES = [(name, options) for name, choices in OPTIONS.items() for options in choices]


def _id(case):
    name, options = case
    return name + ":" + (",".join(f"{k}={v}" for k, v in options.items()) or "defaults")


def _step_both(opt, ref, ours, theirs, x, y):
    opt.zero_grad()
    _loss(tl, ours, tl.tensor(x), tl.tensor(y)).backward()
    opt.step()
    ref.zero_grad()
    _loss(torch, theirs, torch.from_numpy(x), torch.from_numpy(y)).backward()
    ref.step()


def _compare(opt, ref, ours, theirs, tol, where):
    for index, (p, q) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), **tol,
                                   err_msg=f"{where}: parameter {index}")
        entry, expected = opt.state[p], ref.state[q]
        assert list(entry) == list(expected), where
        for key in expected:
            np.testing.assert_allclose(entry[key].numpy(), expected[key].numpy(), **tol,
                                       err_msg=f"{where}: {key} of parameter {index}")
            assert entry[key].numpy().dtype == expected[key].numpy().dtype, (where, key)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_matches_torch(case, dtype):
    name, options = case
    ours, theirs = _pair(_init(dtype=dtype))
    opt, ref = getattr(optim, name)(ours, **options), getattr(torch.optim, name)(theirs, **options)
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-13)
    for step, (x, y) in enumerate(_data(dtype=dtype)):
        _step_both(opt, ref, ours, theirs, x, y)
        _compare(opt, ref, ours, theirs, tol, f"step {step}")
    ours_groups, theirs_groups = opt.state_dict()["param_groups"], ref.state_dict()["param_groups"]
    assert ours_groups == theirs_groups


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_param_groups_and_missing_gradients(name):
    """Two groups with their own options; one parameter has no gradient at some steps, so the
    flat buffer steps it alone (its step count falls behind the others')."""
    options = OPTIONS[name][1]
    ours, theirs = _pair(_init())
    opt = getattr(optim, name)([{"params": ours[:2]}, {"params": ours[2:], "lr": 0.003}],
                               **options)
    ref = getattr(torch.optim, name)([{"params": theirs[:2]}, {"params": theirs[2:], "lr": 0.003}],
                                     **options)
    for step, (x, y) in enumerate(_data()):
        opt.zero_grad()
        ref.zero_grad()
        _loss(tl, ours, tl.tensor(x), tl.tensor(y)).backward()
        _loss(torch, theirs, torch.from_numpy(x), torch.from_numpy(y)).backward()
        if step % 3 == 1:
            ours[1].grad = None
            theirs[1].grad = None
        opt.step()
        ref.step()
        _compare(opt, ref, ours, theirs, dict(rtol=1e-11, atol=1e-13), f"step {step}")


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_state_dict_round_trip_and_torch_checkpoint(name):
    options = OPTIONS[name][1]
    data = _data()
    ours, theirs = _pair(_init())
    opt, ref = getattr(optim, name)(ours, **options), getattr(torch.optim, name)(theirs, **options)
    for x, y in data[:12]:
        _step_both(opt, ref, ours, theirs, x, y)
    saved, torch_saved = opt.state_dict(), ref.state_dict()
    assert list(saved["state"][0]) == list(torch_saved["state"][0])
    for key, value in saved["state"][0].items():
        assert value.shape == tuple(torch_saved["state"][0][key].shape), key
    # restart from our checkpoint, and from PyTorch's converted tensor by tensor
    converted = {
        "state": {i: {k: tl.tensor(v.numpy()) for k, v in e.items()}
                  for i, e in torch_saved["state"].items()},
        "param_groups": torch_saved["param_groups"],
    }
    restarted = []
    for checkpoint in (saved, converted):
        params = [tl.nn.Parameter(tl.tensor(p.numpy().copy())) for p in ours]
        fresh = getattr(optim, name)(params, **options)
        fresh.load_state_dict(checkpoint)
        restarted.append((fresh, params))
    for x, y in data[12:]:
        _step_both(opt, ref, ours, theirs, x, y)
        for fresh, params in restarted:
            fresh.zero_grad()
            _loss(tl, params, tl.tensor(x), tl.tensor(y)).backward()
            fresh.step()
    for fresh, params in restarted:
        for p, q in zip(params, ours, strict=True):
            np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-12, atol=1e-14)
        _compare(fresh, ref, params, theirs, dict(rtol=1e-11, atol=1e-13), "resumed")


def test_a_loaded_state_missing_a_number_is_refused():
    ours, _ = _pair(_init())
    opt = optim.NAdam(ours)
    for x, y in _data(count=2):
        opt.zero_grad()
        _loss(tl, ours, tl.tensor(x), tl.tensor(y)).backward()
        opt.step()
    saved = opt.state_dict()
    del saved["state"][0]["mu_product"]
    with pytest.raises(ValueError, match="mu_product"):
        optim.NAdam(ours).load_state_dict(saved)
    saved = opt.state_dict()
    saved["state"][1]["mu_product"] = tl.zeros(3)
    with pytest.raises(ValueError, match="'mu_product' must hold one number"):
        optim.NAdam(ours).load_state_dict(saved)


def _params():
    return [tl.nn.Parameter(tl.zeros(2))]


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: optim.Adamax(_params(), lr=-1.0), ValueError, "learning rate"),
        (lambda: optim.Adamax(_params(), betas=(1.0, 0.9)), ValueError,
         "beta parameter at index 0"),
        (lambda: optim.Adamax(_params(), eps=-1e-8), ValueError, "epsilon"),
        (lambda: optim.NAdam(_params(), momentum_decay=-0.1), ValueError, "momentum_decay"),
        (lambda: optim.NAdam(_params(), weight_decay=-0.1), ValueError, "weight_decay"),
        (lambda: optim.NAdam(_params(), decoupled_weight_decay=1), TypeError, "bool"),
        (lambda: optim.RAdam(_params(), betas=(0.9, 1.5)), ValueError, "beta parameter at index 1"),
        (lambda: optim.RAdam(_params(), capturable=True), ValueError, "capturable"),
        (lambda: optim.Rprop(_params(), etas=(1.5, 1.2)), ValueError, "Invalid eta values"),
        (lambda: optim.Rprop(_params(), etas=(0.5,)), TypeError, "pair"),
        (lambda: optim.Rprop(_params(), lr="0.1"), TypeError, "real number"),
        (lambda: optim.ASGD(_params(), lr=-0.1), ValueError, "learning rate"),
        (lambda: optim.ASGD(_params(), weight_decay=-1), ValueError, "weight_decay"),
        (lambda: optim.ASGD(_params(), t0=None), TypeError, "t0"),
        (lambda: optim.ASGD(tl.zeros(2)), TypeError, "got a Tensor"),
        (lambda: optim.Adafactor(_params(), beta2_decay=0.5), ValueError, "beta2_decay"),
        (lambda: optim.Adafactor(_params(), d=0.5), ValueError, "clipping threshold d"),
        (lambda: optim.Adafactor(_params(), eps=(-1.0, 1e-3)), ValueError, "epsilon1"),
        (lambda: optim.Adafactor(_params(), eps=1e-3), TypeError, "pair"),
        (lambda: optim.Adafactor(_params(), weight_decay=-0.1), ValueError, "weight_decay"),
    ],
)
def test_bad_arguments_raise(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_bad_arguments_raise_in_torch_too(name):
    """The same mistakes raise in PyTorch (a ValueError there as here, for the numbers)."""
    bad = {"Adamax": dict(lr=-1.0), "NAdam": dict(momentum_decay=-1.0), "RAdam": dict(eps=-1.0),
           "Rprop": dict(etas=(1.5, 1.2)), "ASGD": dict(weight_decay=-1.0),
           "Adafactor": dict(d=0.5)}[name]
    with pytest.raises(ValueError):
        getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))], **bad)
    with pytest.raises(ValueError):
        getattr(optim, name)(_params(), **bad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adafactor_on_batched_matrices_and_scalars(dtype):
    """A 3-D parameter factors its last two dimensions; a 0-d one keeps a whole variance."""
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s).astype(dtype) for s in [(2, 3, 4), (), (3, 1), (1, 5)]]
    ours, theirs = _pair(arrays)
    opt, ref = optim.Adafactor(ours, lr=0.05), torch.optim.Adafactor(theirs, lr=0.05)
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-13)
    for step in range(20):
        grads = [rng.standard_normal(a.shape).astype(dtype) for a in arrays]
        for p, q, g in zip(ours, theirs, grads, strict=True):
            p.grad, q.grad = tl.tensor(g), torch.from_numpy(g.copy())
        opt.step()
        ref.step()
        _compare(opt, ref, ours, theirs, tol, f"step {step}")
    saved = opt.state_dict()
    assert sorted(saved["state"][0]) == ["col_var", "row_var", "step"]
    assert saved["state"][0]["row_var"].shape == (2, 3, 1)
    assert sorted(saved["state"][1]) == ["step", "variance"]
    bad = opt.state_dict()
    bad["state"][0]["row_var"] = tl.zeros(2, 3, 4)
    with pytest.raises(ValueError, match="'row_var' must have shape"):
        optim.Adafactor(ours).load_state_dict(bad)
    bad = opt.state_dict()
    del bad["state"][1]["variance"]
    with pytest.raises(ValueError, match="must have the keys"):
        optim.Adafactor(ours).load_state_dict(bad)
