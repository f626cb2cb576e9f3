"""``nn.AdaptiveLogSoftmaxWithLoss`` (chapter 4, section 11.6): values, gradients, parity."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.autograd import gradcheck


def _model(dtype=None) -> nn.AdaptiveLogSoftmaxWithLoss:
    tl.manual_seed(0)
    return nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, dtype=dtype)


def _data(n: int = 6) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((n, 8)), np.array([0, 4, 9, 2, 7, 5][:n])


def test_output_is_the_full_distributions_entry() -> None:
    model = _model(tl.float64)
    x, y = _data()
    out = model(tl.tensor(x), tl.tensor(y))
    full = model.log_prob(tl.tensor(x)).numpy()
    np.testing.assert_allclose(np.exp(full).sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(out.output.numpy(), full[np.arange(6), y], rtol=1e-12)
    assert out.loss.item() == pytest.approx(-full[np.arange(6), y].mean())
    np.testing.assert_array_equal(model.predict(tl.tensor(x)).numpy(), full.argmax(axis=1))
    single = model(tl.tensor(x[1]), tl.tensor(np.array(4)))
    assert single.output.shape == () and single.output.item() == pytest.approx(full[1, 4])


def test_gradcheck() -> None:
    model = _model(tl.float64)
    x, y = _data(4)
    inputs = tl.tensor(x, requires_grad=True)
    assert gradcheck(lambda t: model(t, tl.tensor(y)).output, (inputs,))
    assert gradcheck(lambda t: model.log_prob(t), (inputs,))


def test_errors() -> None:
    with pytest.raises(ValueError, match="cutoffs should be a sequence of length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [])
    for cutoffs in ([6, 3], [0, 3], [3, 10], [3, 3]):
        with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive"):
            nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)
    model = _model()
    with pytest.raises(RuntimeError, match="Target values should be in \\[0, 9\\]"):
        model(tl.ones(2, 8), tl.tensor(np.array([1, 10])))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        model(tl.ones(3, 8), tl.tensor(np.array([1, 2])))
    with pytest.raises(RuntimeError, match="0D target tensor expects 1D input tensors"):
        model(tl.ones(3, 8), tl.tensor(np.array(1)))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        model(tl.ones(3, 8), tl.tensor(np.ones((3, 1), dtype=np.int64)))


@pytest.mark.parity
def test_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    ours = _model()
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x, y = _data()
    x = x.astype(np.float32)
    a = ours(tl.tensor(x), tl.tensor(y))
    b = theirs(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(a.output.numpy(), b.output.detach().numpy(), atol=1e-5)
    assert a.loss.item() == pytest.approx(b.loss.item(), abs=1e-5)
    a.loss.backward()
    b.loss.backward()
    for name, param in theirs.named_parameters():
        np.testing.assert_allclose(ours.get_parameter(name).grad.numpy(), param.grad.numpy(),
                                   atol=1e-5, err_msg=name)
    np.testing.assert_allclose(ours.log_prob(tl.tensor(x)).numpy(),
                               theirs.log_prob(torch.tensor(x)).detach().numpy(), atol=1e-5)
    np.testing.assert_array_equal(ours.predict(tl.tensor(x)).numpy(),
                                  theirs.predict(torch.tensor(x)).numpy())
    for cutoffs in ([], [6, 3]):
        with pytest.raises(ValueError) as mine:
            nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)
        with pytest.raises(ValueError) as reference:
            torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)
        assert str(mine.value) == str(reference.value)
