"""Parity of optim.Adadelta and optim.LBFGS with torch.optim, and their state-dict round trips.

Adadelta: 20 steps of a small model on the same batches, parameters and state compared after
every step. LBFGS: the same closures from the same weights (a small model's full-batch loss and
Rosenbrock's function), in float64, with budgets and histories small enough to exercise every
stopping rule; the parameters, the returned loss and the state agree to float rounding.
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


def _init(seed: int = 0, dtype=np.float64) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(0.5 * rng.standard_normal(shape)).astype(dtype) for shape in SHAPES]


def _data(seed: int = 1, dtype=np.float64, count: int = 20) -> list[tuple[np.ndarray, np.ndarray]]:
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


def _close(ours, theirs, what, rtol, atol):
    for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(
            a.numpy(),
            b.detach().numpy(),
            rtol=rtol,
            atol=atol,
            err_msg=f"{what}: parameter {index}",
        )


# -- Adadelta ---------------------------------------------------------------------------------
ADADELTA = [
    dict(),
    dict(lr=0.5, rho=0.5),
    dict(eps=1e-3, weight_decay=0.1),
    dict(maximize=True, lr=0.1),
    dict(rho=0.99, weight_decay=0.01, maximize=True),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "options", ADADELTA, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults"
)
def test_adadelta_matches_torch(options, dtype):
    ours, theirs = _pair(_init(dtype=dtype))
    opt, ref = optim.Adadelta(ours, **options), torch.optim.Adadelta(theirs, **options)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-13)
    for step, (x, y) in enumerate(_data(dtype=dtype)):
        opt.zero_grad()
        _loss(tl, ours, tl.tensor(x), tl.tensor(y)).backward()
        opt.step()
        ref.zero_grad()
        _loss(torch, theirs, torch.from_numpy(x), torch.from_numpy(y)).backward()
        ref.step()
        _close(ours, theirs, f"step {step}", **tol)
        for p, q in zip(ours, theirs, strict=True):
            for name in ("square_avg", "acc_delta"):
                np.testing.assert_allclose(
                    opt.state[p][name].numpy(), ref.state[q][name].numpy(), **tol
                )
            assert float(opt.state[p]["step"].item()) == float(ref.state[q]["step"].item())
    assert sorted(opt.state_dict()["param_groups"][0]) == sorted(
        ref.state_dict()["param_groups"][0]
    )


def test_adadelta_state_dict_round_trip_and_torch_checkpoint():
    data = _data()
    ours, theirs = _pair(_init())
    opt, ref = (
        optim.Adadelta(ours, lr=0.7, weight_decay=0.01),
        torch.optim.Adadelta(theirs, lr=0.7, weight_decay=0.01),
    )
    for x, y in data[:10]:
        for lib, params, o in ((tl, ours, opt), (torch, theirs, ref)):
            o.zero_grad()
            _loss(lib, params, lib.tensor(x) if lib is tl else torch.from_numpy(x),
                  lib.tensor(y) if lib is tl else torch.from_numpy(y)).backward()
            o.step()
    # resume ours from our checkpoint, and a second copy from torch's checkpoint converted tensor by
    # tensor
    saved = opt.state_dict()
    torch_saved = ref.state_dict()
    converted = {
        "state": {
            i: {k: tl.tensor(v.numpy()) for k, v in e.items()}
            for i, e in torch_saved["state"].items()
        },
        "param_groups": torch_saved["param_groups"],
    }
    copies = []
    for checkpoint in (saved, converted):
        params = [tl.nn.Parameter(tl.tensor(p.numpy().copy())) for p in ours]
        resumed = optim.Adadelta(params)
        resumed.load_state_dict(checkpoint)
        copies.append((params, resumed))
    for x, y in data[10:]:
        for params, o in [(ours, opt)] + copies:
            o.zero_grad()
            _loss(tl, params, tl.tensor(x), tl.tensor(y)).backward()
            o.step()
        ref.zero_grad()
        _loss(torch, theirs, torch.from_numpy(x), torch.from_numpy(y)).backward()
        ref.step()
    for a, b in zip(copies[0][0], ours, strict=True):  # our own checkpoint: bit for bit
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    _close(copies[1][0], theirs, "resumed from torch's checkpoint", rtol=1e-11, atol=1e-13)
    _close(ours, theirs, "after resuming", rtol=1e-11, atol=1e-13)


def test_adadelta_rejects_bad_options():
    param = tl.nn.Parameter(tl.zeros(2))
    for options in (dict(lr=-1.0), dict(rho=1.5), dict(eps=-1.0), dict(weight_decay=-0.1)):
        with pytest.raises(ValueError):
            optim.Adadelta([param], **options)
        with pytest.raises(ValueError):
            torch.optim.Adadelta([torch.zeros(2, requires_grad=True)], **options)


# -- LBFGS -------------------------------------------------------------------------------------
def _rosenbrock(lib, params):
    (xy,) = params
    return (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2


def _problem(name: str, dtype=np.float64):
    if name == "rosenbrock":
        return [np.array([-1.5, 2.0], dtype=dtype)], lambda lib, params: _rosenbrock(lib, params)
    x, y = _data(dtype=dtype, count=1)[0]
    return _init(dtype=dtype), lambda lib, params: _loss(
        lib,
        params,
        lib.tensor(x) if lib is tl else torch.from_numpy(x),
        lib.tensor(y) if lib is tl else torch.from_numpy(y),
    )


def _closure(lib, opt, params, loss_fn, log):
    def closure():
        opt.zero_grad()
        loss = loss_fn(lib, params)
        loss.backward()
        log.append(float(loss.detach()))
        return loss
    return closure


LBFGS_OPTIONS = [
    dict(),
    dict(line_search_fn="strong_wolfe"),
    dict(history_size=2, max_iter=7),
    dict(history_size=2, max_iter=7, line_search_fn="strong_wolfe"),
    dict(lr=0.3, max_iter=4, max_eval=3),
    dict(max_iter=50, max_eval=9, line_search_fn="strong_wolfe"),
    dict(tolerance_change=1e-3),
    dict(tolerance_grad=1e-2, line_search_fn="strong_wolfe"),
    dict(lr=0.05, history_size=1),
]


@pytest.mark.parametrize("problem", ["model", "rosenbrock"])
@pytest.mark.parametrize(
    "options", LBFGS_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults"
)
def test_lbfgs_matches_torch(options, problem):
    arrays, loss_fn = _problem(problem)
    ours, theirs = _pair(arrays)
    opt, ref = optim.LBFGS(ours, **options), torch.optim.LBFGS(theirs, **options)
    log_ours, log_theirs = [], []
    for step in range(2):  # up to 40 iterations: rounding differences in the last bits stay small
        got = opt.step(_closure(tl, opt, ours, loss_fn, log_ours))
        expected = ref.step(_closure(torch, ref, theirs, loss_fn, log_theirs))
        assert len(log_ours) == len(log_theirs), (
            f"step {step}: {len(log_ours)} evaluations, torch {len(log_theirs)}"
        )
        # float64 rounding (tanh, matmul) differs in the last bits and grows over ~80 evaluations
        np.testing.assert_allclose(log_ours, log_theirs, rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(float(got), expected.item(), rtol=1e-6, atol=1e-12)
        _close(ours, theirs, f"step {step}", rtol=1e-6, atol=1e-9)
        state, ref_state = opt.state[ours[0]], ref.state[theirs[0]]
        assert (state["n_iter"], state["func_evals"]) == (
            ref_state["n_iter"],
            ref_state["func_evals"],
        )
        if "d" in ref_state:
            np.testing.assert_allclose(
                state["d"].numpy(), ref_state["d"].numpy(), rtol=1e-5, atol=1e-8
            )
            assert len(state["old_dirs"]) == len(ref_state["old_dirs"])


def test_lbfgs_float32_matches_torch():
    arrays, loss_fn = _problem("model", np.float32)
    ours, theirs = _pair(arrays)
    opt = optim.LBFGS(ours, history_size=5, max_iter=10, line_search_fn="strong_wolfe")
    ref = torch.optim.LBFGS(theirs, history_size=5, max_iter=10, line_search_fn="strong_wolfe")
    for _ in range(2):
        opt.step(_closure(tl, opt, ours, loss_fn, []))
        ref.step(_closure(torch, ref, theirs, loss_fn, []))
    assert all(p.dtype == tl.float32 for p in ours)
    _close(ours, theirs, "float32", rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_state_dict_round_trip(line_search_fn):
    arrays, loss_fn = _problem("model")
    options = dict(history_size=3, max_iter=4, line_search_fn=line_search_fn)
    ours, theirs = _pair(arrays)
    opt, ref = optim.LBFGS(ours, **options), torch.optim.LBFGS(theirs, **options)
    for _ in range(2):
        opt.step(_closure(tl, opt, ours, loss_fn, []))
        ref.step(_closure(torch, ref, theirs, loss_fn, []))
    saved = opt.state_dict()
    assert sorted(saved["state"][0]) == sorted(ref.state_dict()["state"][0])
    params = [tl.nn.Parameter(tl.tensor(p.numpy().copy())) for p in ours]
    resumed = optim.LBFGS(params, **options)
    resumed.load_state_dict(saved)
    # the saved dict is a snapshot: stepping changes nothing in it
    opt.step(_closure(tl, opt, ours, loss_fn, []))
    resumed.step(_closure(tl, resumed, params, loss_fn, []))
    ref.step(_closure(torch, ref, theirs, loss_fn, []))
    for a, b in zip(params, ours, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    _close(params, theirs, "resumed", rtol=1e-8, atol=1e-10)


def test_lbfgs_loads_torch_state_dict():
    arrays, loss_fn = _problem("rosenbrock")
    options = dict(history_size=4, max_iter=3, line_search_fn="strong_wolfe")
    ours, theirs = _pair(arrays)
    ref = torch.optim.LBFGS(theirs, **options)
    ref.step(_closure(torch, ref, theirs, loss_fn, []))
    ours[0].numpy()[...] = theirs[0].detach().numpy()

    def convert(value):
        if isinstance(value, torch.Tensor):
            return tl.tensor(value.numpy().copy())
        if isinstance(value, list):
            return [convert(v) for v in value]
        return value

    saved = ref.state_dict()
    opt = optim.LBFGS(ours, **options)
    opt.load_state_dict(
        {
            "state": {i: {k: convert(v) for k, v in e.items()} for i, e in saved["state"].items()},
            "param_groups": saved["param_groups"],
        }
    )
    for _ in range(3):
        opt.step(_closure(tl, opt, ours, loss_fn, []))
        ref.step(_closure(torch, ref, theirs, loss_fn, []))
    _close(ours, theirs, "from torch's state dict", rtol=1e-8, atol=1e-10)


def test_lbfgs_refusals():
    param = tl.nn.Parameter(tl.zeros(2))
    with pytest.raises(RuntimeError, match="closure"):
        optim.LBFGS([param]).step()
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [param]}, {"params": [tl.nn.Parameter(tl.zeros(1))]}])
    with pytest.raises(ValueError, match="line_search_fn"):
        optim.LBFGS([param], line_search_fn="armijo")
    with pytest.raises(ValueError, match="learning rate"):
        optim.LBFGS([param], lr=-1.0)
    two = optim.LBFGS([param])
    two.add_param_group({"params": [tl.nn.Parameter(tl.zeros(1))]})
    with pytest.raises(ValueError, match="parameter groups"):
        two.step(lambda: tl.zeros(()))
    opt = optim.LBFGS([param])
    bad = {
        "state": {0: {"d": tl.zeros(3), "n_iter": 1}},
        "param_groups": opt.state_dict()["param_groups"],
    }
    with pytest.raises(ValueError, match="'d' must be a vector of 2"):
        opt.load_state_dict(bad)
    bad["state"][0] = {"mystery": 1}
    with pytest.raises(ValueError, match="unknown LBFGS state"):
        opt.load_state_dict(bad)
    assert not opt.state[param]


def test_lbfgs_keeps_storage_shared():
    source = np.array([-1.5, 2.0])
    xy = tl.nn.Parameter(tl.from_numpy(source))
    opt = optim.LBFGS([xy], line_search_fn="strong_wolfe")
    opt.step(_closure(tl, opt, [xy], lambda lib, params: _rosenbrock(lib, params), []))
    assert np.shares_memory(source, xy.numpy()) and not np.allclose(source, [-1.5, 2.0])


def test_lbfgs_every_option_combination_runs():
    arrays, loss_fn = _problem("model")
    for history, line_search in itertools.product((1, 5), (None, "strong_wolfe")):
        ours, _ = _pair(arrays)
        opt = optim.LBFGS(ours, history_size=history, line_search_fn=line_search, max_iter=5)
        first = float(opt.step(_closure(tl, opt, ours, loss_fn, [])))
        later = float(opt.step(_closure(tl, opt, ours, loss_fn, [])))
        assert later < first
