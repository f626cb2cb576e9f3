"""tensorlib.optim: the Optimizer system (groups, state, flat buffers, checkpoints) and its
errors."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from _chapter_replay import replayed_chapter

import tensorlib as tl
from tensorlib import optim


def _params(
    seed: int = 0, shapes=((4, 3), (4,), (2, 4)), dtype=np.float32
) -> list[tl.nn.Parameter]:
    rng = np.random.default_rng(seed)
    return [tl.nn.Parameter(tl.tensor(rng.standard_normal(s).astype(dtype))) for s in shapes]


def _set_grads(params, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for p in params:
        p.grad = tl.tensor(rng.standard_normal(p.shape).astype(p.dtype))


def _run(opt, params, steps, start=0):
    for step in range(start, start + steps):
        _set_grads(params, 100 + step)
        opt.step()


def _snapshot(opt):
    sd = opt.state_dict()
    return {
        "groups": copy.deepcopy(sd["param_groups"]),
        "state": {i: {k: v.numpy().copy() for k, v in e.items()} for i, e in sd["state"].items()},
    }


def _same(a, b) -> bool:
    if a["groups"] != b["groups"] or a["state"].keys() != b["state"].keys():
        return False
    return all(
        np.array_equal(a["state"][i][k], b["state"][i][k])
        for i in a["state"]
        for k in a["state"][i]
    )


OPTIMIZERS = {
    "Adam": lambda p: optim.Adam(p, lr=0.01, amsgrad=True),
    "AdamW": lambda p: optim.AdamW(p, lr=0.01),
}


# -- construction ---------------------------------------------------------------------------
def test_empty_and_tensor_params_are_refused():
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.AdamW([])
    with pytest.raises(TypeError, match="got a Tensor"):
        optim.AdamW(tl.nn.Parameter(tl.zeros(2)))
    with pytest.raises(TypeError, match="ordered collections"):
        optim.AdamW([{"params": {tl.nn.Parameter(tl.zeros(2))}}])


def test_non_leaf_int_and_non_tensor_params_are_refused():
    leaf = tl.nn.Parameter(tl.zeros(2))
    with pytest.raises(ValueError, match="non-leaf"):
        optim.AdamW([leaf * 2])
    with pytest.raises(TypeError, match="floating point"):
        optim.AdamW([tl.tensor([1, 2])])
    with pytest.raises(TypeError, match="only optimize Tensors"):
        optim.AdamW([np.zeros(2)])


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(lr=-1e-3), "invalid learning rate"),
    (dict(betas=(1.0, 0.9)), "beta parameter at index 0"),
    (dict(betas=(0.9, -0.1)), "beta parameter at index 1"),
    (dict(betas=0.9), "pair"),
    (dict(eps=-1.0), "epsilon"),
    (dict(weight_decay=-0.1), "weight_decay"),
    (dict(lr="fast"), "real number"),
    (dict(amsgrad=1), "amsgrad must be a bool"),
    (dict(capturable=True), "capturable=True is not supported"),
])
def test_invalid_adam_arguments(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        optim.AdamW(_params(), **kwargs)


def test_duplicate_parameters_are_refused_and_nothing_changes():
    params = _params()
    with pytest.raises(ValueError, match="appears twice"):
        optim.AdamW([params[0], params[0]])
    opt = optim.AdamW(params[:2])
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [params[2], params[1]]})
    assert len(opt.param_groups) == 1
    with pytest.raises(ValueError, match="invalid learning rate"):
        opt.add_param_group({"params": [params[2]], "lr": -1.0})
    assert len(opt.param_groups) == 1
    opt.add_param_group({"params": [params[2]], "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["betas"] == (0.9, 0.999)


def test_param_group_keys_order_and_repr():
    opt = optim.AdamW([{"params": _params(), "lr": 0.1}])
    assert list(opt.param_groups[0])[:2] == ["params", "lr"]
    text = repr(opt)
    assert text.startswith("AdamW (\nParameter Group 0\n    amsgrad: False") and text.endswith(")")


# -- stepping ---------------------------------------------------------------------------------
def test_parameters_keep_their_objects_and_storage_and_the_state_shares_one_flat_buffer():
    model = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.ReLU(), tl.nn.Linear(4, 2))
    params = list(model.parameters())
    arrays = [p.numpy() for p in params]
    opt = optim.AdamW(model.parameters(), lr=0.1)
    loss = model(tl.ones(5, 3)).sum()
    loss.backward()
    before = [p.numpy().copy() for p in params]
    opt.step()
    assert all(a is b for a, b in zip(params, model.parameters(), strict=True))
    assert all(a is p.numpy() for a, p in zip(arrays, params, strict=True))  # storage never moves
    bases = {id(opt.state[p]["exp_avg"].numpy().base) for p in params}
    # one flat state array
    assert len(bases) == 1 and opt.state[params[0]]["exp_avg"].numpy().base is not None
    assert all(not np.array_equal(p.numpy(), b) for p, b in zip(params, before, strict=True))
    state = opt.state[params[0]]
    assert list(state) == ["step", "exp_avg", "exp_avg_sq"] and state["step"].item() == 1.0


def test_step_raises_the_version_so_a_stale_graph_refuses_backward():
    w = tl.nn.Parameter(tl.tensor([1.0, 2.0]))
    opt = optim.AdamW([w], lr=0.1)
    (w * w).sum().backward()
    stale = (w * w).sum()  # saved w before the step
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation|in-place"):
        stale.backward()


def test_model_load_state_dict_after_optimizer_writes_into_the_buffer():
    model = tl.nn.Linear(3, 2)
    opt = optim.AdamW(model.parameters(), lr=0.0, weight_decay=0.0)
    model(tl.ones(1, 3)).sum().backward()
    opt.step()
    target = {name: np.full(t.shape, 3.0, np.float32) for name, t in model.state_dict().items()}
    model.load_state_dict(target)
    model(tl.ones(1, 3)).sum().backward()
    opt.step()  # lr 0: the loaded values survive a step
    assert all(np.all(p.numpy() == 3.0) for p in model.parameters())


def test_replacing_data_or_dtype_rebuilds_the_buffers_and_keeps_state():
    model = tl.nn.Linear(3, 2)
    opt = optim.AdamW(model.parameters(), lr=0.1)
    model(tl.ones(1, 3)).sum().backward()
    opt.step()
    exp_avg = opt.state[model.weight]["exp_avg"].numpy().copy()
    model.double()
    model.zero_grad()
    model(tl.ones(1, 3, dtype=tl.float64)).sum().backward()
    opt.step()
    state = opt.state[model.weight]
    assert model.weight.dtype == np.float64 and state["exp_avg"].dtype == np.float64
    assert state["step"].item() == 2.0
    np.testing.assert_allclose(
        state["exp_avg"].numpy(), 0.9 * exp_avg + 0.1 * model.weight.grad.numpy(), rtol=1e-6
    )


def test_parameters_without_gradient_are_skipped():
    params = _params()
    opt = optim.AdamW(params, lr=0.1)
    _set_grads(params, 0)
    params[1].grad = None
    before = params[1].numpy().copy()
    opt.step()
    assert params[1] not in opt.state and np.array_equal(params[1].numpy(), before)
    assert sorted(opt.state_dict()["state"]) == [0, 2]
    _set_grads(params, 1)
    opt.step()  # steps now differ (2, 1, 2): the per-parameter path
    assert [opt.state[p]["step"].item() for p in params] == [2.0, 1.0, 2.0]


def test_zero_grad_and_closure():
    params = _params()
    opt = optim.AdamW(params)
    _set_grads(params, 0)
    opt.zero_grad(set_to_none=False)
    assert all(np.all(p.grad.numpy() == 0) for p in params)
    opt.zero_grad()
    assert all(p.grad is None for p in params)
    calls = []

    def closure():
        calls.append(1)
        loss = sum((p * p).sum() for p in params)
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert calls == [1] and isinstance(loss, tl.Tensor)


# -- checkpoints ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_state_dict_round_trip_is_identical_to_an_uninterrupted_run(name):
    make = OPTIMIZERS[name]
    params = _params()
    opt = make(params)
    _run(opt, params, 10)
    reference = [p.numpy().copy() for p in params]

    params = _params()
    opt = make(params)
    _run(opt, params, 5)
    saved = opt.state_dict()
    values = [p.numpy().copy() for p in params]
    _run(opt, params, 3, start=5)  # saving mid-run is a snapshot: these steps do not change it
    fresh_params = [tl.nn.Parameter(tl.tensor(v)) for v in values]
    fresh = make(fresh_params)
    fresh.load_state_dict(saved)
    _run(fresh, fresh_params, 5, start=5)
    for a, b in zip(fresh_params, reference, strict=True):
        assert np.array_equal(a.numpy(), b)


def test_state_dict_is_a_copy():
    params = _params()
    opt = optim.AdamW(params)
    _run(opt, params, 2)
    saved = opt.state_dict()
    exp_avg = saved["state"][0]["exp_avg"].numpy().copy()
    _run(opt, params, 1, start=2)
    assert np.array_equal(saved["state"][0]["exp_avg"].numpy(), exp_avg)
    assert saved["state"][0]["step"].item() == 2.0 and saved["state"][0]["step"].dtype == np.float32
    saved["param_groups"][0]["lr"] = 123.0
    assert opt.param_groups[0]["lr"] != 123.0


def _corrupt(sd, how):
    sd = copy.deepcopy(sd)
    if how == "groups":
        sd["param_groups"].append(dict(sd["param_groups"][0]))
    elif how == "count":
        sd["param_groups"][0]["params"] = sd["param_groups"][0]["params"][:-1]
    elif how == "shape":
        sd["state"][0]["exp_avg"] = tl.zeros(7)
    elif how == "missing":
        del sd["state"][1]["exp_avg_sq"]
    elif how == "index":
        sd["state"][9] = sd["state"][0]
    elif how == "lr":
        sd["param_groups"][0]["lr"] = -1.0
    elif how == "keys":
        del sd["state"]
    elif how == "step":
        sd["state"][0]["step"] = tl.zeros(2)
    elif how == "dtype":
        sd["state"][0]["exp_avg"] = tl.zeros(4, 3, dtype=tl.bool)
    elif how == "duplicate":
        sd["param_groups"][0]["params"] = [0, 0, 1]
    return sd


@pytest.mark.parametrize(("how", "message"), [
    ("groups", "2 parameter groups, the optimizer has 1"),
    ("count", "group 0 with 2 parameters, the optimizer's group has 3"),
    ("shape", r"'exp_avg' has shape \(7,\), the parameter's is \(4, 3\)"),
    ("missing", r"state of parameter 1 lacks \['exp_avg_sq'\]"),
    ("index", "state for parameter 9, which is in no group"),
    ("lr", "invalid learning rate"),
    ("keys", "keys 'state' and 'param_groups'"),
    ("step", "'step' must hold one number"),
    ("dtype", "expected a floating tensor"),
    ("duplicate", "distinct ints"),
])
def test_corrupt_state_dicts_are_refused_and_nothing_changes(how, message):
    params = _params()
    opt = optim.AdamW(params, lr=0.01)
    _run(opt, params, 3)
    good = opt.state_dict()
    other = optim.AdamW(_params(seed=5), lr=0.5)
    _run(other, other.param_groups[0]["params"], 2)
    before = _snapshot(other)
    with pytest.raises(ValueError, match=message):
        other.load_state_dict(_corrupt(good, how))
    assert _same(before, _snapshot(other))


def test_load_state_dict_casts_to_the_parameter_dtype():
    params = _params()
    opt = optim.AdamW(params)
    _run(opt, params, 2)
    sd = opt.state_dict()
    sd["state"][0]["exp_avg"] = tl.tensor(sd["state"][0]["exp_avg"].numpy().astype(np.float64))
    opt.load_state_dict(sd)
    assert opt.state[params[0]]["exp_avg"].dtype == np.float32
    _run(opt, params, 1, start=2)
    assert opt.state[params[0]]["step"].item() == 3.0


def test_adamw_keeps_decoupled_weight_decay_on_load():
    params = _params()
    adam = optim.Adam(params)
    adamw = optim.AdamW(_params())
    adamw.load_state_dict(adam.state_dict())
    assert adamw.param_groups[0]["decoupled_weight_decay"] is True


# -- the other optimizers: arguments -------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: optim.SGD(p, lr=-0.1), "invalid learning rate"),
        (lambda p: optim.SGD(p, momentum=-0.5), "momentum"),
        (
            lambda p: optim.SGD(p, nesterov=True),
            "Nesterov momentum requires a momentum and zero dampening",
        ),
        (lambda p: optim.SGD(p, momentum=0.9, dampening=0.1, nesterov=True), "zero dampening"),
        (lambda p: optim.SGD(p, weight_decay=-1e-4), "weight_decay"),
        (lambda p: optim.RMSprop(p, alpha=-0.1), "alpha"),
        (lambda p: optim.RMSprop(p, eps=-1.0), "epsilon"),
        (lambda p: optim.Adagrad(p, lr_decay=-1.0), "lr_decay"),
        (lambda p: optim.Adagrad(p, initial_accumulator_value=-1.0), "initial_accumulator_value"),
        (lambda p: optim.Muon(p), r"Muon only supports 2D parameters.*\(4,\)"),
        (lambda p: optim.Muon(p[:1], adjust_lr_fn="nope"), "adjust learning rate function 'nope'"),
        (lambda p: optim.Muon(p[:1], ns_steps=100), "ns_steps"),
        (lambda p: optim.Muon(p[:1], momentum=-1.0), "momentum"),
    ],
)
def test_invalid_arguments_of_every_optimizer(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make(_params())


def test_every_optimizer_round_trips_its_state_dict():
    makers = [lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
              lambda p: optim.RMSprop(p, momentum=0.5, centered=True),
              lambda p: optim.Adagrad(p, lr_decay=0.01),
              lambda p: optim.Muon([q for q in p if q.ndim == 2], lr=0.02)]
    for make in makers:
        params = _params()
        opt = make(params)
        _run(opt, params, 8)
        reference = [p.numpy().copy() for p in params]
        params = _params()
        opt = make(params)
        _run(opt, params, 4)
        saved, values = opt.state_dict(), [p.numpy().copy() for p in params]
        fresh_params = [tl.nn.Parameter(tl.tensor(v)) for v in values]
        fresh = make(fresh_params)
        fresh.load_state_dict(saved)
        _run(fresh, fresh_params, 4, start=4)
        assert all(
            np.array_equal(a.numpy(), b) for a, b in zip(fresh_params, reference, strict=True)
        ), type(opt).__name__


def test_sgd_momentum_buffer_starts_as_the_first_gradient():
    w = tl.nn.Parameter(tl.tensor([1.0, -2.0]))
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    w.grad = tl.tensor([0.5, 0.25])
    opt.step()
    assert opt.state[w]["momentum_buffer"].numpy().tolist() == [0.5, 0.25]
    assert np.allclose(w.numpy(), [0.95, -2.025])


def test_decay_groups_decays_weight_matrices_and_embeddings_not_biases_or_norms():
    model = tl.nn.Sequential(tl.nn.Embedding(10, 4), tl.nn.LayerNorm(4), tl.nn.Linear(4, 10))
    decay, no_decay = optim.decay_groups(model, 0.1)
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert [id(p) for p in decay["params"]] == [id(model[0].weight), id(model[2].weight)]
    assert [id(p) for p in no_decay["params"]] == [
        id(model[1].weight),
        id(model[1].bias),
        id(model[2].bias),
    ]
    # minGPT's choice
    mingpt, rest = optim.decay_groups(model, 0.1, decay_types=(tl.nn.Linear, tl.nn.Conv2d))
    assert [id(p) for p in mingpt["params"]] == [id(model[2].weight)] and len(rest["params"]) == 4
    model[2].weight = model[0].weight  # tied output layer: goes by the embedding, its first owner
    decay, no_decay = optim.decay_groups(model, 0.1)
    assert (
        [id(p) for p in decay["params"]] == [id(model[0].weight)]
        and len(no_decay["params"]) == 3
    )
    optim.AdamW(optim.decay_groups(model, 0.1))  # usable as is


def test_decay_groups_of_a_gpt_is_the_two_or_more_dimensions_rule():
    from tensorlib.gpt.model import GPT, GPTConfig

    for tie in (True, False):
        gpt = GPT(
            GPTConfig(block_size=8, vocab_size=11, n_layer=2, n_head=2, n_embd=8, tie_weights=tie)
        )
        decay, no_decay = optim.decay_groups(gpt, 0.1)
        assert [id(p) for p in decay["params"]] == [id(p) for p in gpt.parameters() if p.ndim >= 2]
        assert [id(p) for p in no_decay["params"]] == [
            id(p) for p in gpt.parameters() if p.ndim < 2
        ]


# -- warmup_cosine ---------------------------------------------------------------------------------
def _warmup_cosine_formula(step: int, warmup: int, total: int, lr: float, eta_min: float) -> float:
    if step < warmup:
        return lr * (step + 1) / warmup
    return eta_min + 0.5 * (lr - eta_min) * (
        1 + math.cos(math.pi * (step - warmup) / (total - warmup))
    )


def _rates(scheduler, optimizer, steps: int) -> list[list[float]]:
    rates = [scheduler.get_last_lr()]
    for _ in range(steps - 1):
        optimizer.step()
        scheduler.step()
        rates.append(scheduler.get_last_lr())
    return rates


@pytest.mark.parametrize(
    ("warmup", "total"), [(0, 50), (1, 50), (2, 50), (10, 100), (49, 50), (0, 1), (1, 2), (3, 4)]
)
def test_warmup_cosine_follows_its_formula_in_every_group(warmup, total):
    params = _params()
    opt = optim.AdamW([{"params": params[:2]}, {"params": params[2:], "lr": 0.03}], lr=0.1)
    scheduler = optim.warmup_cosine(opt, warmup, total, eta_min=1e-3)
    rates = _rates(scheduler, opt, total)
    for base, column in zip((0.1, 0.03), zip(*rates, strict=True), strict=True):
        expected = [_warmup_cosine_formula(s, warmup, total, base, 1e-3) for s in range(total)]
        assert np.allclose(column, expected, rtol=1e-12, atol=1e-15)
        peak = max(warmup - 1, 0)
        assert math.isclose(column[peak], base, rel_tol=1e-12) and max(column) <= base * (1 + 1e-12)
    assert optim.warmup_cosine is optim.lr_scheduler.warmup_cosine


def test_warmup_cosine_with_one_warmup_step_starts_at_the_full_rate():
    opt = optim.SGD(_params(), lr=0.2)
    rates = [
        r[0]
        for r in _rates(optim.lr_scheduler.warmup_cosine(opt, warmup_steps=1, max_steps=5), opt, 5)
    ]
    assert rates[0] == 0.2 and rates[1] == 0.2 and rates[-1] < rates[1]
    opt = optim.SGD(_params(), lr=0.2)
    rates = [
        r[0]
        for r in _rates(optim.lr_scheduler.warmup_cosine(opt, warmup_steps=0, max_steps=5), opt, 5)
    ]
    assert rates[0] == 0.2 and all(a > b for a, b in zip(rates, rates[1:], strict=False))


@pytest.mark.parametrize(("kwargs", "named"), [
    (dict(warmup_steps=-1, max_steps=10), "warmup_steps"),
    (dict(warmup_steps=10, max_steps=10), "max_steps"),
    (dict(warmup_steps=11, max_steps=10), "max_steps"),
    (dict(warmup_steps=2.5, max_steps=10), "warmup_steps"),
    (dict(warmup_steps=True, max_steps=10), "warmup_steps"),
    (dict(warmup_steps=2, max_steps="10"), "max_steps"),
    (dict(warmup_steps=2, max_steps=10, eta_min=-0.1), "eta_min"),
    (dict(warmup_steps=2, max_steps=10, eta_min=float("nan")), "eta_min"),
])
def test_warmup_cosine_refuses_bad_arguments_naming_them(kwargs, named):
    opt = optim.SGD(_params(), lr=0.1)
    with pytest.raises(ValueError, match=named) as caught:
        optim.warmup_cosine(opt, **kwargs)
    assert repr(kwargs[named]) in str(caught.value)
    assert opt.param_groups[0]["lr"] == 0.1 and "initial_lr" not in opt.param_groups[0]


# -- clipping --------------------------------------------------------------------------------------
def test_clip_grad_norm_returns_the_norm_before_clipping_and_scales_once():
    a, b = tl.nn.Parameter(tl.zeros(2)), tl.nn.Parameter(tl.zeros(1))
    a.grad, b.grad = tl.tensor([3.0, 0.0]), tl.tensor([4.0])
    total = tl.nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert abs(total.item() - 5.0) < 1e-6
    assert np.allclose(a.grad.numpy(), [0.6, 0.0], atol=1e-6) and np.allclose(
        b.grad.numpy(), [0.8], atol=1e-6
    )
    total = tl.nn.utils.clip_grad_norm_([a, b], max_norm=10.0)  # below the limit: unchanged
    assert np.allclose(a.grad.numpy(), [0.6, 0.0], atol=1e-6)
    # no gradients
    assert tl.nn.utils.clip_grad_norm_([tl.nn.Parameter(tl.zeros(2))], 1.0).item() == 0.0


def test_clip_grad_norm_nonfinite():
    a = tl.nn.Parameter(tl.zeros(2))
    a.grad = tl.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        tl.nn.utils.clip_grad_norm_(a, 1.0, error_if_nonfinite=True)
    assert a.grad.numpy()[1] == 1.0  # nothing scaled
    with pytest.raises(ValueError, match="norm_type"):
        tl.nn.utils.clip_grad_norm_(a, 1.0, norm_type=-1)


def test_clip_grad_value():
    a = tl.nn.Parameter(tl.zeros(3))
    a.grad = tl.tensor([-2.0, 0.5, 3.0])
    tl.nn.utils.clip_grad_value_([a], 1.0)
    assert a.grad.numpy().tolist() == [-1.0, 0.5, 1.0]
    with pytest.raises(ValueError, match="clip_value"):
        tl.nn.utils.clip_grad_value_([a], -1.0)


# -- schedulers: arguments and state dicts ---------------------------------------------------
def test_scheduler_arguments():
    sched = optim.lr_scheduler
    opt = optim.SGD(_params(), lr=0.1)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        sched.StepLR("adam", 3)
    with pytest.raises(ValueError, match="step_size must be a positive int"):
        sched.StepLR(opt, 0)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        sched.LinearLR(opt, start_factor=0.0)
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas"):
        sched.LambdaLR(opt, [lambda e: 1.0, lambda e: 1.0])
    with pytest.raises(ValueError, match="either total_steps OR"):
        sched.OneCycleLR(opt, 1.0)
    with pytest.raises(ValueError, match="one more than the number of milestone points"):
        sched.SequentialLR(opt, [sched.StepLR(opt, 2), sched.StepLR(opt, 3)], milestones=[])
    other = optim.SGD(_params(), lr=0.1)
    with pytest.raises(ValueError, match="same optimizer"):
        sched.SequentialLR(opt, [sched.StepLR(opt, 2), sched.StepLR(other, 3)], milestones=[4])
    with pytest.raises(KeyError, match="initial_lr"):
        sched.StepLR(optim.SGD(_params(), lr=0.1), 3, last_epoch=5)
    one_cycle = sched.OneCycleLR(optim.SGD(_params(), lr=0.1, momentum=0.9), 1.0, total_steps=3)
    for _ in range(3):
        one_cycle.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        one_cycle.step()


def test_scheduler_refuses_a_foreign_state_dict_and_changes_nothing():
    opt = optim.SGD(_params(), lr=0.1)
    step = optim.lr_scheduler.StepLR(opt, 3)
    cosine = optim.lr_scheduler.CosineAnnealingLR(optim.SGD(_params(), lr=0.1), 10)
    before = step.state_dict()
    with pytest.raises(ValueError, match="expected the keys"):
        step.load_state_dict(cosine.state_dict())
    assert step.state_dict() == before
    broken = dict(before, base_lrs=[0.1, 0.2])
    with pytest.raises(ValueError, match="base_lrs has 2 entries"):
        step.load_state_dict(broken)
    assert step.state_dict() == before


def test_a_gradient_of_the_wrong_shape_changes_nothing():
    first, second = _params()[:2], _params(seed=1)[2:]
    opt = optim.AdamW([{"params": first}, {"params": second}], lr=0.1)
    _set_grads(first + second, 0)
    with pytest.raises(
        RuntimeError, match=r"gradient of size \[3, 3\] to a tensor of size \[2, 4\]"
    ):
        second[0].grad = tl.zeros(3, 3)  # refused at assignment, as in PyTorch
    second[0].grad.data = tl.zeros(3, 3)  # .data takes any shape: the step still checks
    before = [p.numpy().copy() for p in first + second]
    with pytest.raises(
        RuntimeError, match=r"gradient of shape \(3, 3\) for a parameter of shape \(2, 4\)"
    ):
        opt.step()
    assert (
        all(np.array_equal(p.numpy(), b) for p, b in zip(first + second, before, strict=True))
        and not opt.state
    )


def test_tensor_learning_rate_is_refused():
    with pytest.raises(TypeError, match="learning rate must be a real number"):
        optim.SGD(_params(), lr=tl.tensor(0.1))


def test_state_of_a_parameter_not_yet_stepped_is_an_empty_dict():
    params = _params()
    opt = optim.AdamW(params)
    assert opt.state[params[0]] == {}  # a defaultdict, as in PyTorch
    assert opt.state_dict()["state"] == {}  # empty entries are not saved


def test_public_surface():
    import tensorlib.optim as optim_module

    assert (
        optim_module is tl.optim
        and tl.optim.lr_scheduler.CosineAnnealingLR is optim.lr_scheduler.CosineAnnealingLR
    )
    assert tl.nn.utils.clip_grad_norm_ is tl.nn.utils.clip_grad.clip_grad_norm_
    for name in ("Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Muon", "decay_groups"):
        assert hasattr(tl.optim, name), name


# -- chapter 6 replayed: an optimizer made early keeps working after every later cell -----------
@pytest.fixture
def chapter6():
    """A fresh namespace standing in for the notebook: the chapter's modules point at it, as in the
    notebook."""
    with replayed_chapter("06_optimizers", "chapter6_replay") as replay:
        yield replay


def _run_cell(notebook, source: str) -> None:
    exec(compile(source, f"<{notebook.__name__}>", "exec"), notebook.__dict__)


def _steps(opt, params, seeds) -> list[np.ndarray]:
    for seed in seeds:
        _set_grads(params, seed)
        opt.step()
    return [p.numpy().copy() for p in params]


def test_an_optimizer_made_early_in_chapter_6_keeps_working_after_every_later_cell(chapter6):
    notebook, cells = chapter6
    first_sgd = next(i for i, source in enumerate(cells) if "class SGD(" in source)
    for source in cells[: first_sgd + 1]:
        _run_cell(notebook, source)
    early_params = _params(0)
    early = notebook.SGD(early_params, lr=0.1, momentum=0.9, weight_decay=0.01)
    _steps(early, early_params, [1])
    for source in cells[first_sgd + 1 :]:
        _run_cell(notebook, source)
        _steps(early, early_params, [2])  # after every later cell, it still steps
    late_params = _params(0)
    late = notebook.SGD(late_params, lr=0.1, momentum=0.9, weight_decay=0.01)
    assert type(late) is type(early) and isinstance(early, notebook.Optimizer)
    _steps(late, late_params, [1] + [2] * (len(cells) - first_sgd - 1))
    assert all(
        np.array_equal(a.numpy(), b.numpy()) for a, b in zip(early_params, late_params, strict=True)
    )
    # every capability the finished chapter gives an optimizer, the early one has
    scheduler = notebook.StepLR(early, step_size=1, gamma=0.5)
    scheduler.step()
    assert early.param_groups[0]["lr"] == pytest.approx(0.05)
    late.load_state_dict(early.state_dict())
    assert _same(_snapshot(late), _snapshot(early))


def test_rerunning_chapter_6_in_a_live_kernel_gives_working_optimizers(chapter6):
    notebook, cells = chapter6
    for source in cells:
        _run_cell(notebook, source)
    before_params = _params(0)
    before = notebook.AdamW(before_params, lr=1e-2)
    _steps(before, before_params, [1, 2])
    for source in cells:  # the whole chapter again, in the same kernel
        _run_cell(notebook, source)
    after_params = _params(0)
    after = notebook.AdamW(after_params, lr=1e-2)
    assert isinstance(after, notebook.Optimizer)
    _steps(after, after_params, [1, 2, 3])
    # the optimizer made before the re-run still steps, the same way
    _steps(before, before_params, [3])
    assert all(
        np.array_equal(a.numpy(), b.numpy())
        for a, b in zip(before_params, after_params, strict=True)
    )
    after.load_state_dict(before.state_dict())
    assert _same(_snapshot(after), _snapshot(before))
    notebook.CosineAnnealingLR(after, T_max=10).step()
