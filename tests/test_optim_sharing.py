"""Issue 21, chapter 6: optimizers keep the parameters' storage; gradient norms accumulate in
float32 or wider.

Memory sharing: after ``sd = model.state_dict()``, ``a = p.numpy()`` or
``p = Parameter(from_numpy(a))``, creating an optimizer and stepping it leaves ``sd`` and ``a``
following the parameters, as in PyTorch (whose state-dict tensors and ``numpy()`` arrays share the
parameters' memory). Half precision: the norms of ``nn.utils`` accumulate in at least float32, so
float16 gradients of 300 report 600, as PyTorch.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn, optim

OPTIMIZERS = {
    "SGD": lambda ps: optim.SGD(ps, lr=0.1),
    "SGD-momentum": lambda ps: optim.SGD(
        ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01
    ),
    "Adam": lambda ps: optim.Adam(ps, lr=0.1, amsgrad=True),
    "AdamW": lambda ps: optim.AdamW(ps, lr=0.1),
    "RMSprop": lambda ps: optim.RMSprop(ps, lr=0.1, momentum=0.5, centered=True),
    "Adagrad": lambda ps: optim.Adagrad(ps, lr=0.1),
    "Adadelta": lambda ps: optim.Adadelta(ps),
}


def _train(model: nn.Module, opt: optim.Optimizer, steps: int = 3) -> None:
    x = tl.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    for _ in range(steps):
        opt.zero_grad()
        (model(x) ** 2).sum().backward()
        opt.step()


def _model() -> nn.Module:
    tl.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_state_dict_follows_parameters_after_steps(name):
    model = _model()
    sd = model.state_dict()
    before = {key: value.numpy().copy() for key, value in sd.items()}
    _train(model, OPTIMIZERS[name](model.parameters()))
    for key, param in model.state_dict().items():
        assert not np.array_equal(param.numpy(), before[key]), f"{name}: {key} did not train"
        np.testing.assert_array_equal(
            sd[key].numpy(), param.numpy(), err_msg=f"{name}: sd[{key!r}] stopped following"
        )


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_numpy_view_follows_parameters_after_steps(name):
    model = _model()
    arrays = [p.numpy() for p in model.parameters()]
    _train(model, OPTIMIZERS[name](model.parameters()))
    for array, param in zip(arrays, model.parameters(), strict=True):
        assert np.shares_memory(array, param.numpy())
        np.testing.assert_array_equal(array, param.numpy())


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_from_numpy_parameter_writes_into_the_array(name):
    source = np.array([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32)
    param = nn.Parameter(tl.from_numpy(source))
    opt = OPTIMIZERS[name]([param])
    for _ in range(2):
        opt.zero_grad()
        (param * param).sum().backward()
        opt.step()
    assert not np.array_equal(source, [[0.5, -1.0], [2.0, 0.25]])
    np.testing.assert_array_equal(source, param.numpy())


def test_muon_keeps_storage():
    weight = nn.Parameter(tl.from_numpy(np.eye(3, dtype=np.float32) + 0.1))
    held = weight.numpy()
    opt = optim.Muon([weight], lr=0.1)
    weight.grad = tl.ones(3, 3)
    opt.step()
    assert np.shares_memory(held, weight.numpy()) and not np.allclose(held, np.eye(3) + 0.1)


def test_state_dict_loaded_into_model_after_steps_reaches_the_optimizer():
    # Module.load_state_dict copies into the parameters: the next step starts from the loaded values
    model = _model()
    opt = optim.SGD(model.parameters(), lr=0.0)
    _train(model, opt, 1)
    zeros = {key: tl.zeros(*value.shape) for key, value in model.state_dict().items()}
    model.load_state_dict(zeros)
    _train(model, opt, 1)
    assert all(float(np.abs(p.numpy()).max()) == 0.0 for p in model.parameters())


def test_clip_grad_norm_float16_accumulates_in_float32():
    # torch: clip_grad_norm_ of float16 gradients 300 (four of them) returns 600 and scales them to
    # 0.5
    param = tl.full((4,), 300.0, dtype=tl.float16, requires_grad=True)
    param.grad = tl.full((4,), 300.0, dtype=tl.float16)
    total = nn.utils.clip_grad_norm_([param], 1.0)
    assert total.dtype == tl.float16
    assert float(total.item()) == 600.0
    np.testing.assert_allclose(param.grad.numpy().astype(np.float64), 1 / 600 * 300, rtol=1e-3)


@pytest.mark.parametrize(
    "norm_type, expected", [(1.0, 1200.0), (3.0, 300.0 * 4 ** (1 / 3)), (math.inf, 300.0)]
)
def test_clip_grad_norm_float16_other_norms(norm_type, expected):
    grads = [tl.full((4,), 300.0, dtype=tl.float16), tl.full((2, 2), -300.0, dtype=tl.float16)]
    params = []
    for grad in grads:
        param = tl.zeros(*grad.shape, dtype=tl.float16, requires_grad=True)
        param.grad = grad
        params.append(param)
    factor = 2 ** (1 / norm_type) if norm_type != math.inf else 1.0
    total = nn.utils.clip_grad_norm_(params, 1.0, norm_type=norm_type)
    assert math.isfinite(float(total.item()))
    np.testing.assert_allclose(float(total.item()), expected * factor, rtol=1e-3)
    for param in params:
        assert np.all(np.isfinite(param.grad.numpy()))
        np.testing.assert_allclose(
            np.abs(param.grad.numpy().astype(np.float64)), 300 / (expected * factor), rtol=2e-3
        )


def test_clip_grad_value_float16():
    param = tl.zeros(3, dtype=tl.float16, requires_grad=True)
    param.grad = tl.tensor(np.array([-300.0, 0.5, 60000.0], dtype=np.float16))
    nn.utils.clip_grad_value_([param], 1.0)
    np.testing.assert_array_equal(param.grad.numpy(), np.array([-1.0, 0.5, 1.0], dtype=np.float16))


@pytest.mark.parity
def test_clip_grad_norm_float16_matches_torch():
    torch = pytest.importorskip("torch")
    values = np.array([300.0, -250.0, 1e-3, 4000.0], dtype=np.float16)
    ours = tl.zeros(4, dtype=tl.float16, requires_grad=True)
    ours.grad = tl.tensor(values.copy())
    theirs = torch.zeros(4, dtype=torch.float16, requires_grad=True)
    theirs.grad = torch.from_numpy(values.copy())
    for norm_type in (2.0, 1.0, math.inf):
        total = nn.utils.clip_grad_norm_([ours], 1.0, norm_type=norm_type)
        expected = torch.nn.utils.clip_grad_norm_([theirs], 1.0, norm_type=norm_type)
        np.testing.assert_allclose(float(total.item()), float(expected.item()), rtol=2e-3)
        np.testing.assert_allclose(
            ours.grad.numpy().astype(np.float32),
            theirs.grad.numpy().astype(np.float32),
            rtol=2e-3,
            atol=1e-6,
        )
