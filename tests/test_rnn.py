"""Chapter 5: RNNCell, LSTMCell, GRUCell, RNN, LSTM, GRU and init_forget_bias_
(tensorlib.nn.modules.rnn)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.autograd import gradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def randn(*shape, seed=0, dtype=np.float64, requires_grad=False):
    return tl.tensor(
        np.random.default_rng(seed).standard_normal(shape).astype(dtype),
        requires_grad=requires_grad,
    )


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def test_parameter_names_shapes_and_init_bound():
    lstm = nn.LSTM(3, 5, num_layers=2, generator=tl.Generator(0))
    assert [(n, tuple(p.shape)) for n, p in lstm.named_parameters()] == [
        ("weight_ih_l0", (20, 3)),
        ("weight_hh_l0", (20, 5)),
        ("bias_ih_l0", (20,)),
        ("bias_hh_l0", (20,)),
        ("weight_ih_l1", (20, 5)),
        ("weight_hh_l1", (20, 5)),
        ("bias_ih_l1", (20,)),
        ("bias_hh_l1", (20,)),
    ]
    assert all(np.abs(p.numpy()).max() <= 1 / np.sqrt(5) for p in lstm.parameters())
    rnn = nn.RNN(3, 4, bias=False)
    assert [n for n, _ in rnn.named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    cell = nn.LSTMCell(3, 4)
    assert [(n, tuple(p.shape)) for n, p in cell.named_parameters()] == [
        ("weight_ih", (16, 3)), ("weight_hh", (16, 4)), ("bias_ih", (16,)), ("bias_hh", (16,))]


def test_lstm_cell_matches_hand_written_step():
    cell = nn.LSTMCell(3, 2, dtype=tl.float64, generator=tl.Generator(1))
    x, h, c = randn(4, 3, seed=1), randn(4, 2, seed=2), randn(4, 2, seed=3)
    h1, c1 = cell(x, (h, c))
    a = (
        x.numpy() @ cell.weight_ih.numpy().T
        + cell.bias_ih.numpy()
        + h.numpy() @ cell.weight_hh.numpy().T
        + cell.bias_hh.numpy()
    )
    i, f, g, o = sigmoid(a[:, :2]), sigmoid(a[:, 2:4]), np.tanh(a[:, 4:6]), sigmoid(a[:, 6:])
    c_expected = f * c.numpy() + i * g
    np.testing.assert_allclose(c1.numpy(), c_expected, rtol=1e-12)
    np.testing.assert_allclose(h1.numpy(), o * np.tanh(c_expected), rtol=1e-12)


def test_rnn_cell_relu_and_unbatched():
    cell = nn.RNNCell(3, 2, nonlinearity="relu", dtype=tl.float64, generator=tl.Generator(1))
    x, h = randn(3, seed=1), randn(2, seed=2)
    out = cell(x, h)
    expected = np.maximum(
        0,
        x.numpy() @ cell.weight_ih.numpy().T
        + cell.bias_ih.numpy()
        + h.numpy() @ cell.weight_hh.numpy().T
        + cell.bias_hh.numpy(),
    )
    assert out.shape == (2,)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


def test_sequence_layer_equals_cell_loop():
    lstm = nn.LSTM(3, 4, dtype=tl.float64, generator=tl.Generator(2))
    cell = nn.LSTMCell(3, 4, dtype=tl.float64)
    cell.load_state_dict({k[:-3]: v for k, v in lstm.state_dict().items()})
    x = randn(5, 2, 3, seed=4)
    out, (h_n, c_n) = lstm(x)
    h = c = tl.zeros(2, 4, dtype=tl.float64)
    for t in range(5):
        h, c = cell(x[t], (h, c))
        np.testing.assert_allclose(out.numpy()[t], h.numpy(), rtol=1e-12)
    np.testing.assert_allclose(h_n.numpy()[0], h.numpy(), rtol=1e-12)
    np.testing.assert_allclose(c_n.numpy()[0], c.numpy(), rtol=1e-12)


def test_batch_first_and_unbatched_layouts():
    rnn = nn.RNN(3, 4, num_layers=2, dtype=tl.float64, generator=tl.Generator(0))
    rnn_bf = nn.RNN(3, 4, num_layers=2, batch_first=True, dtype=tl.float64)
    rnn_bf.load_state_dict(rnn.state_dict())
    x = randn(5, 2, 3, seed=1)
    out, h = rnn(x)
    out_bf, h_bf = rnn_bf(x.transpose(0, 1))
    np.testing.assert_allclose(out_bf.numpy(), out.numpy().transpose(1, 0, 2), rtol=1e-12)
    np.testing.assert_allclose(h_bf.numpy(), h.numpy(), rtol=1e-12)
    single, h_single = rnn(x[:, 0])
    assert single.shape == (5, 4) and h_single.shape == (2, 4)
    np.testing.assert_allclose(single.numpy(), out.numpy()[:, 0], rtol=1e-12)


def test_bad_inputs_raise():
    lstm = nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(ValueError, match="expected input of shape"):
        lstm(tl.zeros(5, 2, 7))
    with pytest.raises(ValueError, match="h_0 of shape"):
        lstm(tl.zeros(5, 2, 3), (tl.zeros(1, 2, 4), tl.zeros(2, 2, 4)))
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size"):
        nn.RNNCell(3, 0)


def test_gradcheck_lstm_and_rnn():
    lstm = nn.LSTM(2, 3, num_layers=2, dtype=tl.float64, generator=tl.Generator(0))
    x = randn(4, 2, 2, seed=1, requires_grad=True)
    h0, c0 = randn(2, 2, 3, seed=2, requires_grad=True), randn(2, 2, 3, seed=3, requires_grad=True)
    assert gradcheck(lambda x, h, c, *p: lstm(x, (h, c))[0], (x, h0, c0, *lstm.parameters()))
    rnn = nn.RNN(2, 3, dtype=tl.float64, generator=tl.Generator(0))
    assert gradcheck(lambda x, *p: rnn(x)[1], (x, *rnn.parameters()))
    cell = nn.LSTMCell(2, 3, dtype=tl.float64, generator=tl.Generator(0))
    assert gradcheck(lambda x, *p: cell(x[0])[1], (x, *cell.parameters()))


def test_dropout_between_layers_uses_generator():
    a = nn.LSTM(3, 4, num_layers=2, dropout=0.5, generator=tl.Generator(5))
    b = nn.LSTM(3, 4, num_layers=2, dropout=0.5, generator=tl.Generator(5))
    x = randn(5, 2, 3, dtype=np.float32)
    np.testing.assert_array_equal(a(x)[0].numpy(), b(x)[0].numpy())
    a.eval()
    plain = nn.LSTM(3, 4, num_layers=2)
    plain.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a(x)[0].numpy(), plain(x)[0].numpy())


def test_init_forget_bias():
    lstm = nn.LSTM(3, 4, num_layers=2, generator=tl.Generator(0))
    before = lstm.bias_ih_l0.numpy().copy()
    nn.init_forget_bias_(lstm, 1.0)
    for layer in range(2):
        total = (
            getattr(lstm, f"bias_ih_l{layer}").numpy() + getattr(lstm, f"bias_hh_l{layer}").numpy()
        )
        np.testing.assert_array_equal(total[4:8], 1.0)
    np.testing.assert_array_equal(lstm.bias_ih_l0.numpy()[:4], before[:4])  # other gates untouched
    with pytest.raises(ValueError, match="no LSTM"):
        nn.init_forget_bias_(nn.RNN(3, 4))


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "RNN-relu"])
@pytest.mark.parametrize(
    "num_layers, batch_first, bias", [(1, False, True), (2, True, True), (2, False, False)]
)
@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
def test_parity_sequence_layers(torch, kind, num_layers, batch_first, bias, dtype, tol):
    rng = np.random.default_rng(0)
    extra = {"nonlinearity": "relu"} if kind == "RNN-relu" else {}
    ours = getattr(nn, kind.split("-")[0])(
        3,
        4,
        num_layers=num_layers,
        batch_first=batch_first,
        bias=bias,
        dtype=dtype,
        generator=tl.Generator(0),
        **extra,
    )
    ref = getattr(torch.nn, kind.split("-")[0])(
        3, 4, num_layers=num_layers, batch_first=batch_first, bias=bias, **extra
    ).to(getattr(torch, np.dtype(dtype).name))
    ref.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = rng.standard_normal((2, 5, 3) if batch_first else (5, 2, 3)).astype(dtype)
    h0 = rng.standard_normal((num_layers, 2, 4)).astype(dtype)
    c0 = rng.standard_normal((num_layers, 2, 4)).astype(dtype)
    x_tl, x_t = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    states_tl = [tl.tensor(s, requires_grad=True) for s in (h0, c0)]
    states_t = [torch.tensor(s, requires_grad=True) for s in (h0, c0)]
    if kind == "LSTM":
        out, (h, c) = ours(x_tl, tuple(states_tl))
        ref_out, (ref_h, ref_c) = ref(x_t, tuple(states_t))
        finals = [(h, ref_h), (c, ref_c)]
    else:
        out, h = ours(x_tl, states_tl[0])
        ref_out, ref_h = ref(x_t, states_t[0])
        finals = [(h, ref_h)]
    np.testing.assert_allclose(out.numpy(), ref_out.detach().numpy(), rtol=tol, atol=tol)
    for a, b in finals:
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    gs = [rng.standard_normal(t.shape).astype(dtype) for t, _ in [(out, None), *finals]]
    loss_tl = sum(
        (
            (t * tl.tensor(g)).sum()
            for (t, g) in zip([out] + [a for a, _ in finals], gs, strict=True)
        ),
        tl.tensor(0.0, dtype=dtype),
    )
    loss_t = sum(
        (t * torch.tensor(g)).sum()
        for t, g in zip([ref_out] + [b for _, b in finals], gs, strict=True)
    )
    loss_tl.backward()
    loss_t.backward()
    np.testing.assert_allclose(x_tl.grad.numpy(), x_t.grad.numpy(), rtol=tol, atol=tol)
    for a, b in zip(states_tl[: len(finals)], states_t[: len(finals)], strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    ref_params = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), ref_params[name].grad.numpy(), rtol=tol, atol=tol, err_msg=name
        )


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell"])
def test_parity_cells(torch, kind):
    rng = np.random.default_rng(0)
    ours = getattr(nn, kind)(3, 4, dtype=tl.float64, generator=tl.Generator(0))
    ref = getattr(torch.nn, kind)(3, 4).double()
    ref.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = rng.standard_normal((2, 3))
    out, ref_out = ours(tl.tensor(x)), ref(torch.tensor(x))
    out = out if kind == "RNNCell" else out[0] + 2 * out[1]
    ref_out = ref_out if kind == "RNNCell" else ref_out[0] + 2 * ref_out[1]
    np.testing.assert_allclose(out.numpy(), ref_out.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    ref_out.sum().backward()
    ref_params = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), ref_params[name].grad.numpy(), rtol=1e-12, atol=1e-14
        )


# ----------------------------------------------------------------------------- issue 21: empty
# sequences, dropout with one layer


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize(
    "batch_first, shape", [(False, (0, 2, 3)), (True, (2, 0, 3)), (False, (0, 3))]
)
def test_sequence_length_zero_is_refused_as_pytorch(kind, batch_first, shape):
    """PyTorch 2.13: RuntimeError "Expected sequence length to be larger than 0 in RNN"."""
    layer = getattr(nn, kind)(3, 5, batch_first=batch_first)
    with pytest.raises(RuntimeError, match="sequence length to be larger than 0"):
        layer(tl.zeros(*shape))


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_dropout_with_one_layer_warns_as_pytorch(kind):
    with pytest.warns(
        UserWarning,
        match="non-zero dropout expects num_layers greater than 1, but got dropout=0.5 and "
              "num_layers=1",
    ):
        getattr(nn, kind)(3, 5, dropout=0.5)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(nn, kind)(3, 5, num_layers=2, dropout=0.5)
        getattr(nn, kind)(3, 5)


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_empty_sequence_and_dropout_warning_parity(torch, kind):
    import warnings

    with pytest.raises(RuntimeError, match="sequence length to be larger than 0") as theirs:
        getattr(torch.nn, kind)(3, 5)(torch.zeros(0, 2, 3))
    assert type(theirs.value) is RuntimeError
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(torch.nn, kind)(3, 5, dropout=0.5)
        getattr(nn, kind)(3, 5, dropout=0.5)
    assert len(caught) == 2 and str(caught[0].message) == str(caught[1].message)


# ----------------------------------------------------------------------------- GRU (issue 22);
# parity in test_parity_gru.py


def gru_step(x, h, w_ih, w_hh, b_ih, b_hh):
    """PyTorch's GRU equations: gates r, z, n; b_hn inside r * (...)."""
    size = h.shape[-1]
    a, b = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
    r, z = (
        sigmoid(a[:, :size] + b[:, :size]),
        sigmoid(a[:, size : 2 * size] + b[:, size : 2 * size]),
    )
    n = np.tanh(a[:, 2 * size :] + r * b[:, 2 * size :])
    return (1 - z) * n + z * h


def test_gru_parameters_and_hand_written_step():
    gru = nn.GRU(3, 4, num_layers=2, generator=tl.Generator(0))
    assert [(n, tuple(p.shape)) for n, p in gru.named_parameters()] == [
        ("weight_ih_l0", (12, 3)),
        ("weight_hh_l0", (12, 4)),
        ("bias_ih_l0", (12,)),
        ("bias_hh_l0", (12,)),
        ("weight_ih_l1", (12, 4)),
        ("weight_hh_l1", (12, 4)),
        ("bias_ih_l1", (12,)),
        ("bias_hh_l1", (12,)),
    ]
    assert all(np.abs(p.numpy()).max() <= 0.5 for p in gru.parameters())  # U(-1/sqrt(H), 1/sqrt(H))
    cell = nn.GRUCell(3, 4, dtype=tl.float64, generator=tl.Generator(1))
    x, h = randn(5, 3, seed=2), randn(5, 4, seed=3)
    expected = gru_step(
        x.numpy(),
        h.numpy(),
        *(p.numpy() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)),
    )
    np.testing.assert_allclose(cell(x, h).numpy(), expected, rtol=1e-14, atol=1e-15)
    # unbatched
    np.testing.assert_allclose(cell(x[0], h[0]).numpy(), expected[0], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(
        cell(x).numpy(),
        gru_step(
            x.numpy(),
            np.zeros((5, 4)),
            *(p.numpy() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)),
        ),
        rtol=1e-14,
        atol=1e-15,
    )  # hx=None is zeros


@pytest.mark.parametrize("batch_first", [False, True])
def test_gru_equals_cell_loop_and_layouts(batch_first):
    gru = nn.GRU(
        3, 4, num_layers=2, batch_first=batch_first, dtype=tl.float64, generator=tl.Generator(0)
    )
    cells = [nn.GRUCell(3 if layer == 0 else 4, 4, dtype=tl.float64) for layer in range(2)]
    state = gru.state_dict()
    for layer, cell in enumerate(cells):
        cell.load_state_dict(
            {n[: -len(f"_l{layer}")]: v for n, v in state.items() if n.endswith(f"_l{layer}")}
        )
    x = randn(6, 2, 3, seed=1)
    h0 = randn(2, 2, 4, seed=2)
    out, h_n = gru(x.transpose(0, 1) if batch_first else x, h0)
    out = out.transpose(0, 1) if batch_first else out
    hs = [h0[0], h0[1]]
    for t in range(6):
        hs[0] = cells[0](x[t], hs[0])
        hs[1] = cells[1](hs[0], hs[1])
        np.testing.assert_allclose(out.numpy()[t], hs[1].numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(
        h_n.numpy(), np.stack([h.numpy() for h in hs]), rtol=1e-13, atol=1e-15
    )
    unbatched, h_unbatched = gru(x[:, 0] if not batch_first else x[:, 0], h0[:, 0])
    np.testing.assert_allclose(unbatched.numpy(), out.numpy()[:, 0], rtol=1e-13, atol=1e-15)
    assert tuple(h_unbatched.shape) == (2, 4)


def test_gru_gradcheck_and_dropout_between_layers():
    gru = nn.GRU(2, 3, num_layers=2, dtype=tl.float64, generator=tl.Generator(0))
    x, h0 = randn(3, 2, 2, seed=1, requires_grad=True), randn(2, 2, 3, seed=2, requires_grad=True)
    assert gradcheck(
        lambda s, h, *params: gru(s, h)[0] + 0 * gru(s, h)[1].sum(), (x, h0, *gru.parameters())
    )
    cell = nn.GRUCell(2, 3, dtype=tl.float64, generator=tl.Generator(3))
    assert gradcheck(lambda s, h, *params: cell(s[0], h[0]), (x, h0, *cell.parameters()))
    noisy = nn.GRU(2, 3, num_layers=2, dropout=0.5, generator=tl.Generator(4))
    x32 = tl.randn(4, 2, 2, generator=tl.Generator(5))
    assert not np.allclose(noisy(x32)[0].numpy(), noisy.eval()(x32)[0].numpy())


def test_flatten_parameters_is_a_no_op():
    for layer in (nn.RNN(2, 3), nn.LSTM(2, 3), nn.GRU(2, 3)):
        before = {n: p.numpy().copy() for n, p in layer.named_parameters()}
        assert layer.flatten_parameters() is None
        assert all(np.array_equal(before[n], p.numpy()) for n, p in layer.named_parameters())


def test_gru_bad_arguments():
    with pytest.raises(ValueError, match="expected input of shape"):
        nn.GRU(3, 4)(tl.zeros(5, 2, 2))
    with pytest.raises(ValueError, match=r"expected hx of shape \(1, 2, 4\)"):
        nn.GRU(3, 4)(tl.zeros(5, 2, 3), tl.zeros(2, 2, 4))
    with pytest.raises(ValueError, match="hidden_size must be an int >= 1"):
        nn.GRUCell(3, 0)


@pytest.mark.parity
@pytest.mark.parametrize(
    "mode, kwargs",
    [("LSTM", {"proj_size": 2}), ("GRU", {"bidirectional": True}), ("RNN_TANH", {}),
     ("RNN_RELU", {"num_layers": 2})],
)
def test_rnn_base_by_mode_has_torchs_parameters(torch, mode, kwargs):
    ours = nn.RNNBase(mode, 3, 4, **kwargs)
    theirs = torch.nn.RNNBase(mode, 3, 4, **kwargs)
    assert ours.mode == theirs.mode == mode
    assert [(name, tuple(p.shape)) for name, p in ours.named_parameters()] == [
        (name, tuple(p.shape)) for name, p in theirs.named_parameters()
    ]


@pytest.mark.parity
def test_every_recurrent_layer_is_an_rnn_base_as_in_torch(torch):
    pairs = [("RNN", "RNN_TANH"), ("LSTM", "LSTM"), ("GRU", "GRU")]
    for name, mode in pairs:
        ours, theirs = getattr(nn, name)(3, 4), getattr(torch.nn, name)(3, 4)
        assert isinstance(ours, nn.RNNBase) and isinstance(theirs, torch.nn.RNNBase)
        assert ours.mode == theirs.mode == mode
    assert nn.RNN(3, 4, nonlinearity="relu").mode == "RNN_RELU"
    for name in ["RNNCell", "LSTMCell", "GRUCell"]:
        assert isinstance(getattr(nn, name)(3, 4), nn.RNNCellBase)
        assert isinstance(getattr(torch.nn, name)(3, 4), torch.nn.RNNCellBase)


@pytest.mark.parity
def test_rnn_cell_base_by_chunks_has_torchs_parameters(torch):
    ours, theirs = nn.RNNCellBase(3, 4, True, 3), torch.nn.RNNCellBase(3, 4, True, 3)
    assert [(name, tuple(p.shape)) for name, p in ours.named_parameters()] == [
        (name, tuple(p.shape)) for name, p in theirs.named_parameters()
    ]


def test_rnn_base_refuses_an_unknown_mode_and_a_projection_outside_lstm():
    with pytest.raises(ValueError, match="Unrecognized RNN mode: LSTM_TANH"):
        nn.RNNBase("LSTM_TANH", 3, 4)
    with pytest.raises(ValueError, match="proj_size"):
        nn.RNNBase("GRU", 3, 4, proj_size=2)
