"""Chapter 5, section 1.7: PyTorch's recurrent operators at top level (tl.lstm, tl.gru,
tl.rnn_tanh, tl.rnn_relu, both forms, and the one-step tl.lstm_cell, tl.gru_cell,
tl.rnn_tanh_cell, tl.rnn_relu_cell): float64 values and gradients against torch's same calls,
float64 gradchecks, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck

RNG = np.random.default_rng(5)
GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _params(op: str, size: int, hidden: int, layers: int, directions: int, biases: bool,
            proj: int = 0) -> list[np.ndarray]:
    """The flat weight list in PyTorch's order: per layer and direction w_ih, w_hh, b_ih, b_hh,
    w_hr."""
    rows, width, out = GATES[op] * hidden, proj or hidden, []
    for layer in range(layers):
        for _ in range(directions):
            inputs = size if layer == 0 else width * directions
            out += [RNG.standard_normal((rows, inputs)) * 0.5, RNG.standard_normal((rows, width))]
            if biases:
                out += [RNG.standard_normal(rows) * 0.5, RNG.standard_normal(rows) * 0.5]
            if proj:
                out.append(RNG.standard_normal((proj, hidden)) * 0.5)
    return out


# name -> (op, hidden, num_layers, bidirectional, has_biases, batch_first, proj_size)
SEQUENCE_CASES = {
    "lstm": ("lstm", 4, 1, False, True, False, 0),
    "lstm_2_bidir_batch_first": ("lstm", 4, 2, True, True, True, 0),
    "lstm_proj_no_bias": ("lstm", 4, 2, True, False, False, 2),
    "lstm_proj": ("lstm", 5, 1, False, True, True, 3),
    "gru": ("gru", 3, 2, True, True, False, 0),
    "gru_no_bias": ("gru", 3, 1, False, False, True, 0),
    "rnn_tanh": ("rnn_tanh", 4, 2, True, True, False, 0),
    "rnn_relu": ("rnn_relu", 4, 2, False, True, True, 0),
}


def _sequence_arrays(case: str) -> tuple[list[np.ndarray], tuple]:
    op, hidden, layers, bidir, biases, batch_first, proj = SEQUENCE_CASES[case]
    d = 2 if bidir else 1
    x = RNG.standard_normal((2, 5, 3) if batch_first else (5, 2, 3))
    states = [RNG.standard_normal((layers * d, 2, proj or hidden))]
    if op == "lstm":
        states.append(RNG.standard_normal((layers * d, 2, hidden)))
    return [x, *states, *_params(op, 3, hidden, layers, d, biases, proj)], (
        op, len(states), biases, layers, bidir, batch_first)


def _call(m, arrays, meta):
    op, n_states, biases, layers, bidir, batch_first = meta
    x, states, params = arrays[0], list(arrays[1 : 1 + n_states]), list(arrays[1 + n_states :])
    hx = states if op == "lstm" else states[0]
    return getattr(m, op)(x, hx, params, biases, layers, 0.0, False, bidir, batch_first)


@pytest.mark.parametrize("case", sorted(SEQUENCE_CASES))
def test_sequence_gradcheck(case: str) -> None:
    arrays, meta = _sequence_arrays(case)
    tensors = [tl.tensor(a, requires_grad=True) for a in arrays]

    def f(*ts):
        return tuple(_call(tl, list(ts), meta))

    assert gradcheck(f, tuple(tensors))


@pytest.mark.parity
@pytest.mark.parametrize("case", sorted(SEQUENCE_CASES))
def test_sequence_matches_pytorch(case: str) -> None:
    torch = pytest.importorskip("torch")
    arrays, meta = _sequence_arrays(case)
    ours = [tl.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_ours, out_theirs = _call(tl, ours, meta), _call(torch, theirs, meta)
    assert len(out_ours) == len(out_theirs)
    weights = [RNG.standard_normal(tuple(t.shape)) for t in out_theirs]
    for a, b in zip(out_ours, out_theirs, strict=True):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    sum((o * tl.tensor(w)).sum() for o, w in zip(out_ours, weights, strict=True)).backward()
    sum((o * torch.tensor(w)).sum() for o, w in zip(out_theirs, weights, strict=True)).backward()
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parity
@pytest.mark.parametrize("op", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
def test_packed_form_matches_pytorch(op: str) -> None:
    torch = pytest.importorskip("torch")
    batch_sizes = np.array([3, 3, 2, 1])
    data = RNG.standard_normal((int(batch_sizes.sum()), 3))
    states = [RNG.standard_normal((4, 3, 4)) for _ in range(2 if op == "lstm" else 1)]
    params = _params(op, 3, 4, 2, 2, True)

    def run(m, wrap):
        hx = [wrap(s) for s in states]
        return getattr(m, op)(wrap(data), m.tensor(batch_sizes), hx if op == "lstm" else hx[0],
                              [wrap(p) for p in params], True, 2, 0.0, False, True)

    ours = run(tl, tl.tensor)
    theirs = run(torch, lambda a: torch.tensor(a))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_packed_form_gradcheck() -> None:
    batch_sizes = tl.tensor([2, 2, 1])
    data = tl.tensor(RNG.standard_normal((5, 2)), requires_grad=True)
    h0, c0 = (tl.tensor(RNG.standard_normal((2, 2, 3)), requires_grad=True) for _ in range(2))
    params = [tl.tensor(p, requires_grad=True) for p in _params("lstm", 2, 3, 1, 2, True)]

    def f(x, h, c, *ws):
        return tuple(tl.lstm(x, batch_sizes, [h, c], list(ws), True, 1, 0.0, False, True))

    assert gradcheck(f, (data, h0, c0, *params))


CELL_CASES = {
    "lstm_cell": ("lstm_cell", True),
    "lstm_cell_no_bias": ("lstm_cell", False),
    "gru_cell": ("gru_cell", True),
    "gru_cell_no_bias": ("gru_cell", False),
    "rnn_tanh_cell": ("rnn_tanh_cell", True),
    "rnn_relu_cell": ("rnn_relu_cell", True),
}


def _cell_arrays(case: str) -> tuple[str, list[np.ndarray]]:
    op, biases = CELL_CASES[case]
    rows = GATES[op.removesuffix("_cell")] * 4
    arrays = [RNG.standard_normal((3, 2)), RNG.standard_normal((3, 4))]
    if op == "lstm_cell":
        arrays.append(RNG.standard_normal((3, 4)))
    arrays += [RNG.standard_normal((rows, 2)), RNG.standard_normal((rows, 4))]
    if biases:
        arrays += [RNG.standard_normal(rows), RNG.standard_normal(rows)]
    return op, arrays


def _cell_call(m, op, ts):
    if op == "lstm_cell":
        return m.lstm_cell(ts[0], [ts[1], ts[2]], *ts[3:])
    return getattr(m, op)(*ts)


@pytest.mark.parametrize("case", sorted(CELL_CASES))
def test_cell_gradcheck(case: str) -> None:
    op, arrays = _cell_arrays(case)
    assert gradcheck(lambda *ts: _cell_call(tl, op, ts),
                     tuple(tl.tensor(a, requires_grad=True) for a in arrays))


@pytest.mark.parity
@pytest.mark.parametrize("case", sorted(CELL_CASES))
def test_cell_matches_pytorch(case: str) -> None:
    torch = pytest.importorskip("torch")
    op, arrays = _cell_arrays(case)
    ours = _cell_call(tl, op, [tl.tensor(a) for a in arrays])
    theirs = _cell_call(torch, op, [torch.tensor(a) for a in arrays])
    ours, theirs = (ours if isinstance(ours, tuple) else (ours,),
                    theirs if isinstance(theirs, tuple) else (theirs,))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_operators_are_the_layers() -> None:
    layer = tl.nn.LSTM(3, 4, num_layers=2, dropout=0.5, generator=tl.Generator(0))
    x = tl.randn(6, 2, 3, generator=tl.Generator(1))
    zeros = tl.zeros(2, 2, 4)
    layer.eval()
    expected, (h_n, c_n) = layer(x)
    output, h, c = tl.lstm(x, [zeros, zeros], list(layer.parameters()), True, 2, 0.5, False,
                           False, False)
    assert np.array_equal(output.numpy(), expected.numpy())
    assert np.array_equal(h.numpy(), h_n.numpy()) and np.array_equal(c.numpy(), c_n.numpy())
    tl.manual_seed(3)
    trained, _, _ = tl.lstm(x, [zeros, zeros], list(layer.parameters()), True, 2, 0.5, True,
                            False, False)
    assert not np.allclose(trained.numpy(), expected.numpy())  # dropout between the layers


def test_bad_input() -> None:
    x, h = tl.randn(5, 2, 3), tl.zeros(1, 2, 4)
    params = [tl.randn(16, 3), tl.randn(16, 4), tl.randn(16), tl.randn(16)]
    with pytest.raises(RuntimeError, match="lstm expects two hidden states, got 1"):
        tl.lstm(x, [h], params, True, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="incorrect number of RNN parameters: 3"):
        tl.lstm(x, [h, h], params[:3], True, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="gru expects one hidden state tensor, got list"):
        tl.gru(x, [h], params, True, 1, 0.0, False, False, False)
    with pytest.raises(IndexError, match=r"expected a 3-D input .* got \(5, 3\)"):
        tl.rnn_tanh(x[:, 0], h, params[:4], True, 1, 0.0, False, False, False)
    with pytest.raises(IndexError, match=r"gru_cell: expected input of shape \(B, in\)"):
        tl.gru_cell(tl.randn(3), tl.zeros(4), tl.randn(12, 3), tl.randn(12, 4))
    with pytest.raises(RuntimeError, match="lstm_cell expects two hidden states, got 1"):
        tl.lstm_cell(tl.randn(2, 3), [tl.zeros(2, 4)], tl.randn(16, 3), tl.randn(16, 4))
