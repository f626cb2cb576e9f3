"""tensorlib.optim.swa_utils against torch.optim.swa_utils, in float64.

AveragedModel (the default running mean, avg_fn, multi_avg_fn, use_buffers), update_bn and SWALR
run side by side with PyTorch's on the same weights, step after step; the state dicts must have
PyTorch's keys and values (to float rounding); bad arguments raise.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import optim
from tensorlib.optim import swa_utils as ours

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity
theirs = torch.optim.swa_utils


def _models():
    a = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.BatchNorm1d(4), tl.nn.Linear(4, 2)).double()
    b = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2)
    ).double()
    _copy_into(a, b)
    return a, b


def _copy_into(a, b):
    """b's parameters and buffers := a's."""
    with torch.no_grad():
        for p, q in zip(a.state_dict().values(), b.state_dict().values(), strict=True):
            q.copy_(torch.from_numpy(np.array(p.numpy())))


def _assert_close(ours_model, theirs_model, atol=1e-15):
    ours_state, theirs_state = ours_model.state_dict(), theirs_model.state_dict()
    assert list(ours_state) == list(theirs_state)
    for key in ours_state:
        a, b = ours_state[key].numpy(), theirs_state[key].numpy()
        assert a.dtype == b.dtype and a.shape == b.shape, key
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=atol, err_msg=key)


AVERAGES = {
    "swa-default": (lambda lib: {}),
    "swa-avg_fn": (lambda lib: dict(avg_fn=lib.get_swa_avg_fn())),
    "swa-multi": (lambda lib: dict(multi_avg_fn=lib.get_swa_multi_avg_fn())),
    "ema-avg_fn": (lambda lib: dict(avg_fn=lib.get_ema_avg_fn(0.95))),
    "ema-multi": (lambda lib: dict(multi_avg_fn=lib.get_ema_multi_avg_fn(0.9))),
    "ema-multi-half": (lambda lib: dict(multi_avg_fn=lib.get_ema_multi_avg_fn(0.3))),
    "ema-buffers": (lambda lib: dict(multi_avg_fn=lib.get_ema_multi_avg_fn(0.5), use_buffers=True)),
    "swa-buffers": (lambda lib: dict(use_buffers=True)),
}


@pytest.mark.parametrize("name", sorted(AVERAGES))
def test_averaged_model_matches_torch(name):
    rng = np.random.default_rng(0)
    model, reference = _models()
    averaged = ours.AveragedModel(model, **AVERAGES[name](ours))
    torch_averaged = theirs.AveragedModel(reference, **AVERAGES[name](theirs))
    for _ in range(30):
        with tl.no_grad():
            for p in model.parameters():
                p.add_(tl.tensor(0.1 * rng.standard_normal(p.shape)))
        x = rng.standard_normal((8, 3))
        model(tl.tensor(x))  # moves the BatchNorm statistics
        _copy_into(model, reference)
        averaged.update_parameters(model)
        torch_averaged.update_parameters(reference)
        _assert_close(averaged, torch_averaged)
    assert averaged.n_averaged.item() == 30 and averaged.n_averaged.dtype == tl.int64
    with tl.no_grad():
        averaged.eval()
        torch_averaged.eval()
        x = rng.standard_normal((5, 3))
        np.testing.assert_allclose(
            averaged(tl.tensor(x)).numpy(), torch_averaged(torch.from_numpy(x)).detach().numpy(),
            rtol=1e-13, atol=1e-15,
        )


def test_averaged_model_state_dict_round_trip_and_torch_checkpoint():
    rng = np.random.default_rng(1)
    model, reference = _models()
    averaged, torch_averaged = ours.AveragedModel(model), theirs.AveragedModel(reference)
    snapshots = []
    for _ in range(5):
        with tl.no_grad():
            for p in model.parameters():
                p.add_(tl.tensor(rng.standard_normal(p.shape)))
        _copy_into(model, reference)
        averaged.update_parameters(model)
        torch_averaged.update_parameters(reference)
        snapshots.append(model[0].weight.numpy().copy())
    np.testing.assert_allclose(averaged.module[0].weight.numpy(), np.mean(snapshots, axis=0),
                               rtol=1e-13)
    saved = averaged.state_dict()
    fresh = ours.AveragedModel(_models()[0])
    fresh.load_state_dict(saved)
    assert fresh.n_averaged.item() == 5
    from_torch = ours.AveragedModel(_models()[0])
    from_torch.load_state_dict(
        {k: tl.tensor(v.numpy()) for k, v in torch_averaged.state_dict().items()}
    )
    _assert_close(from_torch, torch_averaged)
    for restored in (fresh, from_torch):  # both continue as the uninterrupted average does
        restored.update_parameters(model)
    averaged.update_parameters(model)
    torch_averaged.update_parameters(reference)
    _assert_close(fresh, torch_averaged)
    _assert_close(from_torch, torch_averaged)
    _assert_close(averaged, torch_averaged)


def test_averaged_model_keeps_the_model_apart():
    model, _ = _models()
    averaged = ours.AveragedModel(model)
    assert all(p is not q for p, q in zip(averaged.parameters(), model.parameters(), strict=True))
    averaged.update_parameters(model)
    with tl.no_grad():
        model[0].weight.fill_(7.0)
    assert not np.any(averaged.module[0].weight.numpy() == 7.0)


def test_float32_averages_keep_their_dtype():
    model = tl.nn.Linear(3, 2)
    reference = torch.nn.Linear(3, 2)
    _copy_into(model, reference)
    averaged = ours.AveragedModel(model, multi_avg_fn=ours.get_swa_multi_avg_fn())
    torch_averaged = theirs.AveragedModel(reference, multi_avg_fn=theirs.get_swa_multi_avg_fn())
    rng = np.random.default_rng(2)
    for _ in range(7):
        with tl.no_grad():
            model.weight.add_(tl.tensor(rng.standard_normal((2, 3)).astype(np.float32)))
        _copy_into(model, reference)
        averaged.update_parameters(model)
        torch_averaged.update_parameters(reference)
    assert averaged.module.weight.dtype == tl.float32
    _assert_close(averaged, torch_averaged, atol=1e-6)


@pytest.mark.parametrize("training", [True, False])
def test_update_bn_matches_torch(training):
    rng = np.random.default_rng(3)
    model, reference = _models()
    averaged, torch_averaged = ours.AveragedModel(model), theirs.AveragedModel(reference)
    averaged.update_parameters(model)
    torch_averaged.update_parameters(reference)
    averaged.train(training)
    torch_averaged.train(training)
    batches = [rng.standard_normal((6, 3)) for _ in range(4)]
    ours.update_bn([(tl.tensor(x), 0) for x in batches], averaged)
    theirs.update_bn([(torch.from_numpy(x), 0) for x in batches], torch_averaged)
    _assert_close(averaged, torch_averaged, atol=1e-14)
    assert averaged.training == training and averaged.module[1].momentum == 0.1
    ours.update_bn([tl.tensor(x) for x in batches], model)  # plain tensors, a plain model
    theirs.update_bn([torch.from_numpy(x) for x in batches], reference)
    _assert_close(model, reference, atol=1e-14)


def test_update_bn_without_batchnorm_does_nothing():
    model = tl.nn.Linear(2, 2)
    before = model.weight.numpy().copy()
    ours.update_bn([tl.zeros(3, 2)], model)
    assert np.array_equal(model.weight.numpy(), before)


SWALR = [
    dict(swa_lr=0.05),
    dict(swa_lr=[0.05, 0.01], anneal_epochs=7, anneal_strategy="linear"),
    dict(swa_lr=0.2, anneal_epochs=0),
    dict(swa_lr=0.01, anneal_epochs=1, anneal_strategy="cos"),
]


@pytest.mark.parametrize("options", SWALR, ids=lambda o: ",".join(map(str, o.items())))
@pytest.mark.parametrize("kind", ["sgd", "adamw"])
def test_swalr_matches_torch(options, kind):
    params = [tl.nn.Parameter(tl.zeros(2)) for _ in range(2)]
    torch_params = [torch.nn.Parameter(torch.zeros(2)) for _ in range(2)]
    groups = [{"params": [p], "lr": lr} for p, lr in zip(params, [0.1, 0.3], strict=True)]
    torch_groups = [
        {"params": [p], "lr": lr} for p, lr in zip(torch_params, [0.1, 0.3], strict=True)
    ]
    if kind == "sgd":
        opt, ref = optim.SGD(groups, lr=0.1), torch.optim.SGD(torch_groups, lr=0.1)
    else:
        opt, ref = optim.AdamW(groups), torch.optim.AdamW(torch_groups)
    scheduler, torch_scheduler = ours.SWALR(opt, **options), theirs.SWALR(ref, **options)
    assert scheduler.get_last_lr() == torch_scheduler.get_last_lr()
    for step in range(30):
        opt.step()
        ref.step()
        scheduler.step()
        torch_scheduler.step()
        assert scheduler.get_last_lr() == torch_scheduler.get_last_lr(), step
        if step == 12:  # a checkpoint taken mid-run restores the rest
            saved = scheduler.state_dict()
            assert saved == torch_scheduler.state_dict()
    resumed_params = [tl.nn.Parameter(tl.zeros(2)) for _ in range(2)]
    resumed_opt = optim.SGD(
        [{"params": [p], "lr": lr} for p, lr in zip(resumed_params, [0.1, 0.3], strict=True)]
    )
    resumed = ours.SWALR(resumed_opt, **options)
    resumed.load_state_dict(saved)
    for group, lr in zip(resumed_opt.param_groups, saved["_last_lr"], strict=True):
        group["lr"] = lr
    fresh_params = [tl.nn.Parameter(tl.zeros(2)) for _ in range(2)]
    reference_opt = optim.SGD(
        [{"params": [p], "lr": lr} for p, lr in zip(fresh_params, [0.1, 0.3], strict=True)]
    )
    reference = ours.SWALR(reference_opt, **options)
    for _ in range(13):
        reference.step()
    for _ in range(10):
        resumed.step()
        reference.step()
        assert resumed.get_last_lr() == reference.get_last_lr()


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: ours.get_ema_multi_avg_fn(1.5), ValueError, "Invalid decay"),
        (lambda: ours.get_ema_avg_fn(-0.1), ValueError, "Invalid decay"),
        (lambda: ours.AveragedModel(tl.nn.Linear(2, 2), avg_fn=ours.get_swa_avg_fn(),
                                    multi_avg_fn=ours.get_swa_multi_avg_fn()),
         AssertionError, "Only one of"),
        (lambda: ours.AveragedModel("model"), TypeError, "must be a Module"),
        (lambda: ours.AveragedModel(tl.nn.Linear(2, 2), device="cuda"), ValueError, "CPU"),
        (lambda: ours.AveragedModel(tl.nn.Linear(2, 2)).update_parameters(tl.nn.Linear(2, 3)),
         ValueError, "do not match"),
        (lambda: ours.SWALR(optim.SGD([tl.nn.Parameter(tl.zeros(1))]), 0.1,
                            anneal_strategy="exp"), ValueError, "anneal_strategy"),
        (lambda: ours.SWALR(optim.SGD([tl.nn.Parameter(tl.zeros(1))]), 0.1, anneal_epochs=-1),
         ValueError, "anneal_epochs"),
        (lambda: ours.SWALR(optim.SGD([tl.nn.Parameter(tl.zeros(1))]), 0.1, anneal_epochs=2.5),
         ValueError, "anneal_epochs"),
        (lambda: ours.SWALR(optim.SGD([tl.nn.Parameter(tl.zeros(1))]), [0.1, 0.2]),
         ValueError, "swa_lr"),
    ],
)
def test_bad_arguments_raise(make, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=match):
            make()
