"""Chapter 5, section 1.6: packed sequences (``tensorlib.nn.utils.rnn``) and bidirectional,
multi-layer ``RNN``/``LSTM``/``GRU`` on packed and padded input, against PyTorch 2.13 with copied
weights (float64 values and gradients), float64 gradchecks, round trips and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.autograd import gradcheck
from tensorlib.nn.utils.rnn import (
    PackedSequence,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)

LENGTHS = {"sorted": [5, 4, 4, 2], "unsorted": [2, 5, 1, 4], "ties": [3, 1, 3, 3]}


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    return torch


def padded_input(lengths, batch_first, seed=0, size=3):
    """A (T, B, size) (or (B, T, size)) float64 array, padding filled with junk (it must not
    matter)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((max(lengths), len(lengths), size))
    return np.ascontiguousarray(x.transpose(1, 0, 2)) if batch_first else x


def copy_weights(ours, ref):
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})


def assert_close(a, b, tol=1e-12):
    """``a`` (a tensorlib Tensor) equals the array ``b`` to ``tol``, shapes included."""
    a, b = a.numpy(), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def pair(kind, torch, num_layers, bidirectional, batch_first=False, bias=True, seed=0):
    torch.manual_seed(seed)
    ref = getattr(torch.nn, kind)(
        3, 4, num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first,
        bias=bias,
    ).double()
    ours = getattr(nn, kind)(
        3, 4, num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first,
        bias=bias, dtype=tl.float64,
    )
    copy_weights(ours, ref)
    return ours, ref


def initial_state(kind, torch, layers, batch, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((layers, batch, 4)) for _ in range(2 if kind == "LSTM" else 1)]
    ours = [tl.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    if kind == "LSTM":
        return tuple(ours), tuple(theirs), ours, theirs
    return ours[0], theirs[0], ours, theirs


def states(kind, hidden):
    return list(hidden) if kind == "LSTM" else [hidden]


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize(
    "num_layers, bidirectional, batch_first, lengths, with_h0",
    [
        (1, False, False, "sorted", False),
        (1, True, True, "unsorted", True),
        (2, False, True, "ties", False),
        (2, True, False, "unsorted", True),
        (2, True, True, "sorted", True),
        (2, True, False, "ties", False),
    ],
)
def test_packed_layers_match_pytorch(
    torch, kind, num_layers, bidirectional, batch_first, lengths, with_h0
):
    """Packed outputs, h_n (and c_n) and gradients of the padded input, h_0 and every weight."""
    from torch.nn.utils import rnn as torch_rnn

    ours, ref = pair(kind, torch, num_layers, bidirectional, batch_first, seed=len(lengths))
    lengths = LENGTHS[lengths]
    enforce_sorted = lengths == sorted(lengths, reverse=True)
    x = padded_input(lengths, batch_first, seed=1)
    x_ours, x_ref = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    packed_ours = pack_padded_sequence(x_ours, lengths, batch_first, enforce_sorted)
    packed_ref = torch_rnn.pack_padded_sequence(x_ref, lengths, batch_first, enforce_sorted)
    args_ours, args_ref = (), ()
    if with_h0:
        layers = num_layers * (2 if bidirectional else 1)
        h0_ours, h0_ref, leaves_ours, leaves_ref = initial_state(kind, torch, layers, 4, 2)
        args_ours, args_ref = (h0_ours,), (h0_ref,)
    out_ours, hidden_ours = ours(packed_ours, *args_ours)
    out_ref, hidden_ref = ref(packed_ref, *args_ref)
    assert isinstance(out_ours, PackedSequence)
    assert_close(out_ours.data, out_ref.data.detach().numpy())
    assert out_ours.batch_sizes.tolist() == out_ref.batch_sizes.tolist()
    for a, b in zip(states(kind, hidden_ours), states(kind, hidden_ref), strict=True):
        assert_close(a, b.detach().numpy())
    # a loss that reads the padded output and every final state, with distinct weights
    rng = np.random.default_rng(3)
    padded_ours, lengths_ours = pad_packed_sequence(out_ours, batch_first=batch_first)
    padded_ref, lengths_ref = torch_rnn.pad_packed_sequence(out_ref, batch_first=batch_first)
    assert lengths_ours.tolist() == lengths_ref.tolist() == lengths
    w = rng.standard_normal(tuple(padded_ref.shape))
    loss_ours = (padded_ours * tl.tensor(w)).sum()
    loss_ref = (padded_ref * torch.tensor(w)).sum()
    for a, b in zip(states(kind, hidden_ours), states(kind, hidden_ref), strict=True):
        v = rng.standard_normal(tuple(b.shape))
        loss_ours = loss_ours + (a * tl.tensor(v)).sum()
        loss_ref = loss_ref + (b * torch.tensor(v)).sum()
    loss_ours.backward()
    loss_ref.backward()
    assert_close(x_ours.grad, x_ref.grad.numpy())
    if with_h0:
        for a, b in zip(leaves_ours, leaves_ref, strict=True):
            assert_close(a.grad, b.grad.numpy())
    params_ref = dict(ref.named_parameters())
    for name, param in ours.named_parameters():
        assert_close(param.grad, params_ref[name].grad.numpy())


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("num_layers, bias", [(1, True), (2, False), (3, True)])
def test_bidirectional_padded_input_matches_pytorch(torch, kind, batch_first, num_layers, bias):
    ours, ref = pair(kind, torch, num_layers, True, batch_first, bias, seed=num_layers)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in ref.named_parameters()]
    x = padded_input([4, 4, 4], batch_first, seed=5)
    x_ours, x_ref = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out_ours, hidden_ours = ours(x_ours)
    out_ref, hidden_ref = ref(x_ref)
    assert_close(out_ours, out_ref.detach().numpy())
    for a, b in zip(states(kind, hidden_ours), states(kind, hidden_ref), strict=True):
        assert_close(a, b.detach().numpy())
    w = np.random.default_rng(6).standard_normal(tuple(out_ref.shape))
    (out_ours * tl.tensor(w)).sum().backward()
    (out_ref * torch.tensor(w)).sum().backward()
    assert_close(x_ours.grad, x_ref.grad.numpy())
    params_ref = dict(ref.named_parameters())
    for name, param in ours.named_parameters():
        assert_close(param.grad, params_ref[name].grad.numpy())
    # unbatched (T, in), with an h_0 of (D·num_layers, H)
    single = x[0] if batch_first else x[:, 0]
    h0 = np.random.default_rng(7).standard_normal((2 * num_layers, 4))
    hx_ours = (tl.tensor(h0), tl.tensor(h0)) if kind == "LSTM" else tl.tensor(h0)
    hx_ref = (torch.tensor(h0), torch.tensor(h0)) if kind == "LSTM" else torch.tensor(h0)
    out_ours, hidden_ours = ours(tl.tensor(single), hx_ours)
    out_ref, hidden_ref = ref(torch.tensor(single), hx_ref)
    assert_close(out_ours, out_ref.detach().numpy())
    for a, b in zip(states(kind, hidden_ours), states(kind, hidden_ref), strict=True):
        assert_close(a, b.detach().numpy())


def test_bidirectional_parameters_and_repr(torch):
    ours = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    ref = torch.nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in ref.named_parameters()
    ]
    assert repr(ours) == repr(ref)
    assert ours.bidirectional is True


@pytest.mark.parity
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths", list(LENGTHS))
@pytest.mark.parametrize("total_length, padding_value", [(None, 0.0), (7, -2.5)])
def test_pack_and_pad_match_pytorch(torch, batch_first, lengths, total_length, padding_value):
    """Data, batch_sizes, the indices, the padded round trip and the gradients through both."""
    from torch.nn.utils import rnn as torch_rnn

    lengths = LENGTHS[lengths]
    enforce_sorted = lengths == sorted(lengths, reverse=True)
    x = padded_input(lengths, batch_first, seed=8, size=2)
    x_ours, x_ref = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    p_ours = pack_padded_sequence(x_ours, tl.tensor(lengths), batch_first, enforce_sorted)
    p_ref = torch_rnn.pack_padded_sequence(x_ref, torch.tensor(lengths), batch_first,
                                           enforce_sorted)
    assert_close(p_ours.data, p_ref.data.detach().numpy(), 0)
    for field in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        a, b = getattr(p_ours, field), getattr(p_ref, field)
        assert (a is None) == (b is None), field
        if a is not None:
            assert a.tolist() == b.tolist() and a.dtype == tl.int64, field
    padded_ours, len_ours = pad_packed_sequence(p_ours, batch_first, padding_value, total_length)
    padded_ref, len_ref = torch_rnn.pad_packed_sequence(p_ref, batch_first, padding_value,
                                                        total_length)
    assert_close(padded_ours, padded_ref.detach().numpy(), 0)
    assert len_ours.tolist() == len_ref.tolist() and len_ours.dtype == tl.int64
    w = np.random.default_rng(9).standard_normal(tuple(padded_ref.shape))
    (padded_ours * tl.tensor(w)).sum().backward()
    (padded_ref * torch.tensor(w)).sum().backward()
    assert_close(x_ours.grad, x_ref.grad.numpy(), 0)


@pytest.mark.parity
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_unpack_unpad_sequence_match_pytorch(torch, enforce_sorted):
    from torch.nn.utils import rnn as torch_rnn

    rng = np.random.default_rng(10)
    lengths = [4, 3, 3, 1] if enforce_sorted else [1, 4, 3, 2]
    arrays = [rng.standard_normal((n, 2, 2)) for n in lengths]
    ours = [tl.tensor(a, requires_grad=True) for a in arrays]
    ref = [torch.tensor(a, requires_grad=True) for a in arrays]
    p_ours = pack_sequence(ours, enforce_sorted)
    p_ref = torch_rnn.pack_sequence(ref, enforce_sorted)
    assert_close(p_ours.data, p_ref.data.detach().numpy(), 0)
    back_ours, back_ref = unpack_sequence(p_ours), torch_rnn.unpack_sequence(p_ref)
    for a, b, original in zip(back_ours, back_ref, arrays, strict=True):
        assert_close(a, b.detach().numpy(), 0)
        assert_close(a, original, 0)
    sum(((a * (i + 1)).sum() for i, a in enumerate(back_ours)), tl.tensor(0.0)).backward()
    sum((a * (i + 1)).sum() for i, a in enumerate(back_ref)).backward()
    for a, b in zip(ours, ref, strict=True):
        assert_close(a.grad, b.grad.numpy(), 0)
    for batch_first in (False, True):
        padded = pad_sequence(ours, batch_first)
        pieces = unpad_sequence(padded, tl.tensor(lengths), batch_first)
        pieces_ref = torch_rnn.unpad_sequence(torch_rnn.pad_sequence(ref, batch_first),
                                              torch.tensor(lengths), batch_first)
        for a, b in zip(pieces, pieces_ref, strict=True):
            assert_close(a, b.detach().numpy(), 0)


def test_packed_equals_each_sequence_alone():
    """The definition: a packed batch is each sequence run alone, with no padding."""
    lengths = [3, 6, 1, 4]
    rng = np.random.default_rng(11)
    sequences = [tl.tensor(rng.standard_normal((n, 3))) for n in lengths]
    for kind in (nn.RNN, nn.LSTM, nn.GRU):
        layers = kind(3, 4, num_layers=2, bidirectional=True, dtype=tl.float64,
                      generator=tl.Generator(1))
        output, hidden = layers(pack_sequence(sequences, enforce_sorted=False))
        h_n = hidden[0] if kind is nn.LSTM else hidden
        for i, (out_i, seq) in enumerate(zip(unpack_sequence(output), sequences, strict=True)):
            alone, alone_hidden = layers(seq)  # unbatched (L, in)
            alone_h = alone_hidden[0] if kind is nn.LSTM else alone_hidden
            assert_close(out_i, alone.numpy(), 1e-13)
            assert_close(h_n[:, i], alone_h.numpy(), 1e-13)


def test_gradcheck_pack_lstm_pad():
    lstm = nn.LSTM(2, 2, num_layers=2, bidirectional=True, dtype=tl.float64,
                   generator=tl.Generator(3))
    x = tl.randn(3, 3, 2, generator=tl.Generator(4), dtype=tl.float64, requires_grad=True)
    h0 = tl.randn(4, 3, 2, generator=tl.Generator(5), dtype=tl.float64, requires_grad=True)
    c0 = tl.randn(4, 3, 2, generator=tl.Generator(6), dtype=tl.float64, requires_grad=True)

    def run(x, h0, c0, *params):
        packed = pack_padded_sequence(x, [2, 3, 1], enforce_sorted=False)
        output, (h_n, c_n) = lstm(packed, (h0, c0))
        return pad_packed_sequence(output, batch_first=True)[0].sum(-1) + h_n.sum() * c_n.sum()

    assert gradcheck(run, (x, h0, c0, *lstm.parameters()))


def test_gradcheck_pack_and_pad_alone():
    x = tl.randn(4, 3, 2, generator=tl.Generator(7), dtype=tl.float64, requires_grad=True)

    def run(x):
        packed = pack_padded_sequence(x, [2, 4, 3], batch_first=False, enforce_sorted=False)
        return pad_packed_sequence(packed, batch_first=True, padding_value=1.5, total_length=5)[0]

    assert gradcheck(run, (x,))


def test_packed_sequence_api():
    data, sizes = tl.randn(3, 2), tl.tensor([2, 1])
    packed = PackedSequence(data, sizes)
    assert packed.sorted_indices is None and packed.unsorted_indices is None
    assert PackedSequence((data, sizes)).batch_sizes is sizes
    d, b, s, u = PackedSequence(data, sizes, tl.tensor([1, 2, 0]))
    assert u.tolist() == [2, 0, 1] and u.dtype == tl.int64
    assert packed.to(tl.float32) is packed and packed.float() is packed
    doubled = packed.double()
    assert doubled.data.dtype == tl.float64 and doubled.batch_sizes is sizes
    assert isinstance(doubled, PackedSequence) and packed.long().data.dtype == tl.int64
    assert not packed.is_cuda and not packed.is_pinned() and packed.cpu() is packed
    assert PackedSequence._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert repr(packed).startswith("PackedSequence(data=tensor(")
    assert tl.nn.utils.rnn.pack_padded_sequence is pack_padded_sequence


ERRORS = [
    # (call on (ours, theirs) modules, exception type, message PyTorch shares or None)
    (lambda R, x: R.pack_padded_sequence(x, [2, 3, 1]), RuntimeError,
     "`lengths` array must be sorted in decreasing order"),
    (lambda R, x: R.pack_padded_sequence(x, [3, 2, 0]), RuntimeError,
     "Length of all samples has to be greater than 0"),
    (lambda R, x: R.pack_padded_sequence(x, [3, 0, 2], enforce_sorted=False), RuntimeError,
     "Length of all samples has to be greater than 0"),
    (lambda R, x: R.pack_padded_sequence(x, [3, 2]), RuntimeError,
     r"Expected `len\(lengths\)` to be equal to batch_size, but got 2 \(batch_size=3\)"),
    (lambda R, x: R.pack_padded_sequence(x, [[3, 2, 1]]), RuntimeError,
     "'lengths' argument should be a 1D CPU int64 tensor"),
    (lambda R, x: R.pack_padded_sequence(x[:0], [1, 1, 1]), RuntimeError,
     "Cannot pack empty tensors."),
    (lambda R, x: R.pad_packed_sequence(R.pack_padded_sequence(x, [4, 2, 1]), total_length=3),
     ValueError, "Expected total_length to be at least the length of the longest sequence"),
    (lambda R, x: R.pack_sequence([]), RuntimeError, "received an empty list of sequences"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_as_pytorch(torch, case):
    from torch.nn.utils import rnn as torch_rnn

    call, kind, message = ERRORS[case]
    x = np.zeros((4, 3, 2))
    with pytest.raises(kind, match=message):
        call(tl.nn.utils.rnn, tl.tensor(x))
    with pytest.raises(kind, match=message):
        call(torch_rnn, torch.tensor(x))


def test_errors_of_our_own():
    x = tl.zeros(4, 3, 2)
    with pytest.raises(ValueError, match="a length of 5 is longer than the input's 4 steps"):
        pack_padded_sequence(x, [5, 2, 1])
    with pytest.raises(TypeError, match="lengths must be a 1-D tensor or a sequence of ints"):
        pack_padded_sequence(x, "abc")
    with pytest.raises(ValueError, match=r"expected input of shape \(T, B, \*\)"):
        pack_padded_sequence(tl.zeros(3), [1, 1, 1])
    with pytest.raises(TypeError, match="expected Tensors data and batch_sizes"):
        PackedSequence([1.0, 2.0], [1, 1])
    packed = pack_padded_sequence(x, [3, 2, 1])
    with pytest.raises(ValueError, match=r"data has shape \(N, 5\), got \(6, 2\)"):
        nn.GRU(5, 4)(packed)
    with pytest.raises(ValueError, match=r"expected hx of shape \(2, 3, 4\), got \(1, 3, 4\)"):
        nn.RNN(2, 4, bidirectional=True)(packed, tl.zeros(1, 3, 4))
    with pytest.raises(ValueError, match=r"expected c_0 of shape \(1, 3, 4\), got \(1, 2, 4\)"):
        nn.LSTM(2, 4)(packed, (tl.zeros(1, 3, 4), tl.zeros(1, 2, 4)))


def test_float32_packed_lstm_matches_float64():
    lengths = [4, 1, 3]
    x = padded_input(lengths, False, seed=12)
    lstm = nn.LSTM(3, 4, bidirectional=True, generator=tl.Generator(2))
    lstm64 = nn.LSTM(3, 4, bidirectional=True, dtype=tl.float64)
    lstm64.load_state_dict({k: v.double() for k, v in lstm.state_dict().items()})
    out32, (h32, _) = lstm(pack_padded_sequence(tl.tensor(x, dtype=tl.float32), lengths, False,
                                                enforce_sorted=False))
    out64, (h64, _) = lstm64(pack_padded_sequence(tl.tensor(x), lengths, False, False))
    assert out32.data.dtype == tl.float32
    np.testing.assert_allclose(out32.data.numpy(), out64.data.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h32.numpy(), h64.numpy(), rtol=1e-5, atol=1e-6)


def test_packed_dropout_between_layers_uses_generator():
    """In training mode, dropout acts on the packed data between layers, drawn from the
    layer's generator: the same generator state gives the same result."""
    sequences = [tl.randn(n, 3, generator=tl.Generator(n)) for n in (4, 2, 3)]
    results = []
    for _ in range(2):
        gru = nn.GRU(3, 4, num_layers=2, dropout=0.5, bidirectional=True,
                     generator=tl.Generator(8))
        output, h_n = gru(pack_sequence(sequences, enforce_sorted=False))
        results.append((output.data.numpy(), h_n.numpy()))
        assert output.data.shape == (9, 8) and h_n.shape == (4, 3, 4)
    np.testing.assert_array_equal(results[0][0], results[1][0])
    gru.eval()
    evaluated, _ = gru(pack_sequence(sequences, enforce_sorted=False))
    assert not np.array_equal(evaluated.data.numpy(), results[0][0])
