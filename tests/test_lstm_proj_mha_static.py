"""Chapter 5: ``LSTM(..., proj_size=P)`` (sections 1.2 and 1.3) and
``F.multi_head_attention_forward``'s ``static_k``/``static_v`` with the layout-naming shape errors
of ``MultiheadAttention`` (section 5.2): against PyTorch 2.13 with copied weights (values and
gradients, float64), float64 gradchecks and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib import nn
from tensorlib.autograd import gradcheck
from tensorlib.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

TOL = {"rtol": 1e-10, "atol": 1e-12}


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    import warnings

    # PyTorch's CPU LSTM with projections warns that oneDNN does not support it
    warnings.filterwarnings("ignore", message="LSTM with projections is not supported")
    return torch


def close(ours, theirs, name=""):
    ours = ours.numpy() if isinstance(ours, tl.Tensor) else ours
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else theirs
    np.testing.assert_allclose(ours, theirs, err_msg=name, **TOL)


def pair_lstm(torch, seed=0, **kwargs):
    """A PyTorch LSTM in float64 and ours, loaded from PyTorch's state_dict."""
    torch.manual_seed(seed)
    ref = torch.nn.LSTM(dtype=torch.float64, **kwargs)
    ours = nn.LSTM(dtype=tl.float64, **kwargs)
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    return ours, ref


# ------------------------------------------------------------------------------ LSTM, proj_size


@pytest.mark.parity
@pytest.mark.parametrize(
    "kwargs",
    [
        {"proj_size": 2},
        {"proj_size": 3, "num_layers": 2, "bidirectional": True},
        {"proj_size": 1, "num_layers": 3, "bias": False, "batch_first": True},
        {"proj_size": 0, "num_layers": 2, "bidirectional": True},
    ],
)
def test_lstm_proj_parameters_match_pytorch(torch, kwargs):
    ours = nn.LSTM(4, 5, generator=tl.Generator(0), **kwargs)
    ref = torch.nn.LSTM(4, 5, **kwargs)
    assert list(ours.state_dict()) == ref._flat_weights_names
    assert [tuple(p.shape) for p in ours.parameters()] == [tuple(p.shape) for p in ref.parameters()]
    assert repr(ours) == repr(ref)
    assert ours.proj_size == ref.proj_size
    assert all(np.abs(p.numpy()).max() <= 1 / np.sqrt(5) for p in ours.parameters())
    # and back: PyTorch loads ours
    ref.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})


@pytest.mark.parity
@pytest.mark.parametrize(
    "num_layers, bidirectional, batch_first, bias, proj, with_state",
    [
        (1, False, False, True, 2, True),
        (1, True, True, True, 3, False),
        (2, False, True, True, 1, True),
        (2, True, False, False, 2, True),
        (3, True, True, True, 4, True),
    ],
)
def test_lstm_proj_parity_values_and_gradients(
    torch, num_layers, bidirectional, batch_first, bias, proj, with_state
):
    ours, ref = pair_lstm(torch, input_size=3, hidden_size=5, num_layers=num_layers,
                          bidirectional=bidirectional, batch_first=batch_first, bias=bias,
                          proj_size=proj)
    rng = np.random.default_rng(num_layers + proj)
    layers = num_layers * (2 if bidirectional else 1)
    x = rng.standard_normal((2, 6, 3) if batch_first else (6, 2, 3))
    leaves_ours = [tl.tensor(x, requires_grad=True)]
    leaves_ref = [torch.tensor(x, requires_grad=True)]
    if with_state:
        for shape in ((layers, 2, proj), (layers, 2, 5)):  # h_0 of width P, c_0 of width H
            s = rng.standard_normal(shape)
            leaves_ours.append(tl.tensor(s, requires_grad=True))
            leaves_ref.append(torch.tensor(s, requires_grad=True))
    state_ours = tuple(leaves_ours[1:]) if with_state else None
    state_ref = tuple(leaves_ref[1:]) if with_state else None
    out, (h, c) = ours(leaves_ours[0], state_ours)
    ref_out, (ref_h, ref_c) = ref(leaves_ref[0], state_ref)
    d = 2 if bidirectional else 1
    assert tuple(out.shape) == tuple(ref_out.shape) == ((2, 6, d * proj) if batch_first
                                                        else (6, 2, d * proj))
    assert tuple(h.shape) == (layers, 2, proj) and tuple(c.shape) == (layers, 2, 5)
    loss_ours, loss_ref = 0.0, 0.0
    for a, b in ((out, ref_out), (h, ref_h), (c, ref_c)):
        close(a, b)
        w = rng.standard_normal(tuple(b.shape))
        loss_ours = loss_ours + (a * tl.tensor(w)).sum()
        loss_ref = loss_ref + (b * torch.tensor(w)).sum()
    loss_ours.backward()
    loss_ref.backward()
    for a, b in zip(leaves_ours, leaves_ref, strict=True):
        close(a.grad, b.grad)
    params_ref = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        close(p.grad, params_ref[name].grad, name)


@pytest.mark.parity
def test_lstm_proj_unbatched_parity(torch):
    ours, ref = pair_lstm(torch, seed=1, input_size=3, hidden_size=4, num_layers=2,
                          bidirectional=True, proj_size=2)
    x = np.random.default_rng(1).standard_normal((5, 3))
    h0, c0 = np.full((4, 2), 0.1), np.full((4, 4), -0.2)
    out, (h, c) = ours(tl.tensor(x), (tl.tensor(h0), tl.tensor(c0)))
    ref_out, (ref_h, ref_c) = ref(torch.tensor(x), (torch.tensor(h0), torch.tensor(c0)))
    for a, b in ((out, ref_out), (h, ref_h), (c, ref_c)):
        assert tuple(a.shape) == tuple(b.shape)
        close(a, b)


@pytest.mark.parity
@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_proj_packed_parity(torch, bidirectional):
    from torch.nn.utils import rnn as torch_rnn

    ours, ref = pair_lstm(torch, seed=2, input_size=3, hidden_size=5, num_layers=2,
                          bidirectional=bidirectional, proj_size=2, batch_first=True)
    lengths = [3, 5, 1, 4]
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5, 3))
    layers = 2 * (2 if bidirectional else 1)
    h0, c0 = rng.standard_normal((layers, 4, 2)), rng.standard_normal((layers, 4, 5))
    x_ours, x_ref = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    packed_ours = pack_padded_sequence(x_ours, lengths, batch_first=True, enforce_sorted=False)
    packed_ref = torch_rnn.pack_padded_sequence(x_ref, lengths, batch_first=True,
                                                enforce_sorted=False)
    out, (h, c) = ours(packed_ours, (tl.tensor(h0), tl.tensor(c0)))
    ref_out, (ref_h, ref_c) = ref(packed_ref, (torch.tensor(h0), torch.tensor(c0)))
    close(out.data, ref_out.data)
    close(h, ref_h)
    close(c, ref_c)
    padded, _ = pad_packed_sequence(out, batch_first=True)
    ref_padded, _ = torch_rnn.pad_packed_sequence(ref_out, batch_first=True)
    w = rng.standard_normal(tuple(ref_padded.shape))
    ((padded * tl.tensor(w)).sum() + h.sum() + (c * c).sum()).backward()
    ((ref_padded * torch.tensor(w)).sum() + ref_h.sum() + (ref_c * ref_c).sum()).backward()
    close(x_ours.grad, x_ref.grad)
    params_ref = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        close(p.grad, params_ref[name].grad, name)


def test_lstm_proj_gradcheck():
    lstm = nn.LSTM(2, 3, num_layers=2, proj_size=2, bidirectional=True, dtype=tl.float64,
                   generator=tl.Generator(3))
    rng = np.random.default_rng(3)
    x = tl.tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)
    h0 = tl.tensor(rng.standard_normal((4, 2, 2)), requires_grad=True)
    c0 = tl.tensor(rng.standard_normal((4, 2, 3)), requires_grad=True)

    def run(x, h0, c0, *params):
        out, (h, c) = lstm(x, (h0, c0))
        return out.sum(-1) + h.sum() + (c * c).sum()

    assert gradcheck(run, (x, h0, c0, *lstm.parameters()))


def test_lstm_proj_matches_the_equations():
    """One layer: h_t = (o ⊙ tanh c_t) W_hr^T, the gates read the projected h_{t-1}."""
    lstm = nn.LSTM(3, 4, proj_size=2, dtype=tl.float64, generator=tl.Generator(4))
    x = np.random.default_rng(4).standard_normal((5, 2, 3))
    p = {k: v.numpy() for k, v in lstm.state_dict().items()}
    h, c = np.zeros((2, 2)), np.zeros((2, 4))
    outputs = []
    for x_t in x:
        a = x_t @ p["weight_ih_l0"].T + p["bias_ih_l0"] + h @ p["weight_hh_l0"].T + p["bias_hh_l0"]
        i, f, g, o = np.split(a, 4, axis=-1)
        sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = (sig(o) * np.tanh(c)) @ p["weight_hr_l0"].T
        outputs.append(h)
    out, (h_n, c_n) = lstm(tl.tensor(x))
    np.testing.assert_allclose(out.numpy(), np.stack(outputs), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(h_n.numpy()[0], h, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(c_n.numpy()[0], c, rtol=1e-13, atol=1e-15)


def test_lstm_proj_forget_bias_and_state_dict_round_trip():
    lstm = nn.init_forget_bias_(nn.LSTM(3, 4, proj_size=2, generator=tl.Generator(5)), 1.0)
    total = lstm.bias_ih_l0.numpy() + lstm.bias_hh_l0.numpy()
    np.testing.assert_array_equal(total[4:8], 1.0)
    other = nn.LSTM(3, 4, proj_size=2, generator=tl.Generator(6))
    other.load_state_dict(lstm.state_dict())
    np.testing.assert_array_equal(other.weight_hr_l0.numpy(), lstm.weight_hr_l0.numpy())
    with pytest.raises((KeyError, RuntimeError, ValueError)):
        nn.LSTM(3, 4, generator=tl.Generator(6)).load_state_dict(lstm.state_dict())


@pytest.mark.parity
@pytest.mark.parametrize(
    "make, match",
    [
        (lambda m: m.LSTM(3, 4, proj_size=-1), "positive integer or zero"),
        (lambda m: m.LSTM(3, 4, proj_size=4), "smaller than hidden_size"),
        (lambda m: m.LSTM(3, 4, proj_size=9), "smaller than hidden_size"),
        (lambda m: m.RNN(3, 4, proj_size=2), "only supported for LSTM"),
        (lambda m: m.GRU(3, 4, proj_size=2), "only supported for LSTM"),
    ],
)
def test_lstm_proj_construction_errors_match_pytorch(torch, make, match):
    with pytest.raises(ValueError, match=match):
        make(nn)
    with pytest.raises(ValueError, match=match):
        make(torch.nn)


def test_lstm_proj_state_shape_errors():
    lstm = nn.LSTM(3, 4, proj_size=2, dtype=tl.float64)
    x = tl.zeros(5, 2, 3, dtype=tl.float64)
    with pytest.raises(ValueError, match=r"h_0 of shape \(1, 2, 2\), got \(1, 2, 4\)"):
        lstm(x, (tl.zeros(1, 2, 4, dtype=tl.float64), tl.zeros(1, 2, 4, dtype=tl.float64)))
    with pytest.raises(ValueError, match=r"c_0 of shape \(1, 2, 4\), got \(1, 2, 2\)"):
        lstm(x, (tl.zeros(1, 2, 2, dtype=tl.float64), tl.zeros(1, 2, 2, dtype=tl.float64)))
    with pytest.raises(ValueError, match="proj_size should be a positive integer"):
        nn.LSTM(3, 4, proj_size=1.5)
    assert nn.RNN(3, 4, proj_size=0).proj_size == 0  # 0 is no projection, for every kind


# --------------------------------------------------------- multi_head_attention_forward, static_k


def mha_pair(torch, kdim=None, add_zero_attn=False):
    torch.manual_seed(7)
    ref = torch.nn.MultiheadAttention(8, 2, kdim=kdim, vdim=kdim, add_zero_attn=add_zero_attn,
                                      dtype=torch.float64)
    tensors = {k: tl.tensor(v.detach().numpy(), requires_grad=True)
               for k, v in ref.named_parameters()}
    return ref, tensors


def call(module, weights, q, k, v, *, zero=False, **kwargs):
    """F.multi_head_attention_forward with a module's weights (``module`` is torch's functional
    namespace or ours)."""
    separate = "q_proj_weight" in weights
    return module.multi_head_attention_forward(
        q, k, v, 8, 2, weights.get("in_proj_weight"), weights["in_proj_bias"], None, None, zero,
        0.0, weights["out_proj.weight"], weights["out_proj.bias"],
        use_separate_proj_weight=separate, q_proj_weight=weights.get("q_proj_weight"),
        k_proj_weight=weights.get("k_proj_weight"), v_proj_weight=weights.get("v_proj_weight"),
        **kwargs,
    )


CASES = {
    "both": {},
    "static_k only": {"static_v": False},
    "static_v only": {"static_k": False},
    "zero_attn": {"zero": True},
    "padding": {"padding": True},
    "attn_mask": {"attn_mask": True},
    "fused": {"need_weights": False},
    "per head": {"average_attn_weights": False},
    "kdim": {"kdim": 3},
    "unbatched": {"unbatched": True},
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(CASES))
def test_static_kv_parity_values_and_gradients(torch, case):
    options = dict(CASES[case])
    unbatched, kdim = options.pop("unbatched", False), options.pop("kdim", None)
    zero = options.pop("zero", False)
    use_k, use_v = options.pop("static_k", True), options.pop("static_v", True)
    ref, ours_w = mha_pair(torch, kdim=kdim, add_zero_attn=zero)
    ref_w = dict(ref.named_parameters())
    rng = np.random.default_rng(len(case))
    n, length, source = (1, 3, 5) if unbatched else (3, 4, 5)
    width = kdim or 8
    arrays = {
        "query": rng.standard_normal((length, 8) if unbatched else (length, n, 8)),
        "key": rng.standard_normal((source, width) if unbatched else (source, n, width)),
        "static_k": rng.standard_normal((n * 2, source, 4)),
        "static_v": rng.standard_normal((n * 2, source, 4)),
    }
    leaves_ours = {k: tl.tensor(v, requires_grad=True) for k, v in arrays.items()}
    leaves_ref = {k: torch.tensor(v, requires_grad=True) for k, v in arrays.items()}
    extra_ours, extra_ref = {}, {}
    if options.pop("padding", False):
        mask = rng.random((n, source)) < 0.4
        mask[:, 0] = False
        extra_ours["key_padding_mask"], extra_ref["key_padding_mask"] = (
            tl.tensor(mask), torch.tensor(mask))
    if options.pop("attn_mask", False):
        mask = rng.standard_normal((length, source))
        extra_ours["attn_mask"], extra_ref["attn_mask"] = tl.tensor(mask), torch.tensor(mask)
    for name, use in (("static_k", use_k), ("static_v", use_v)):
        if use:
            extra_ours[name], extra_ref[name] = leaves_ours[name], leaves_ref[name]
    kv_ours, kv_ref = leaves_ours["key"], leaves_ref["key"]
    out, weights = call(F, ours_w, leaves_ours["query"], kv_ours, kv_ours, zero=zero,
                        **extra_ours, **options)
    ref_out, ref_weights = call(torch.nn.functional, ref_w, leaves_ref["query"], kv_ref, kv_ref,
                                zero=zero, **extra_ref, **options)
    close(out, ref_out)
    loss_ours = (out * tl.tensor(np.cos(np.arange(out.numel())).reshape(out.shape))).sum()
    loss_ref = (ref_out * torch.tensor(np.cos(np.arange(out.numel())).reshape(out.shape))).sum()
    if ref_weights is not None:
        assert tuple(weights.shape) == tuple(ref_weights.shape)
        close(weights, ref_weights)
        loss_ours = loss_ours + (weights * weights).sum()
        loss_ref = loss_ref + (ref_weights * ref_weights).sum()
    else:
        assert weights is None
    loss_ours.backward()
    loss_ref.backward()
    for name, leaf in leaves_ours.items():
        theirs = leaves_ref[name].grad
        if theirs is None:  # not read: the key is replaced by the statics
            assert leaf.grad is None or not leaf.grad.numpy().any(), name
        else:
            close(leaf.grad, theirs, name)
    for name, param in ours_w.items():
        theirs = ref_w[name].grad
        if theirs is None:
            assert param.grad is None or not param.grad.numpy().any(), name
        else:
            close(param.grad, theirs, name)


def test_static_kv_gradcheck():
    layer = nn.MultiheadAttention(4, 2, dtype=tl.float64, generator=tl.Generator(8))
    rng = np.random.default_rng(8)
    q = tl.tensor(rng.standard_normal((3, 2, 4)), requires_grad=True)
    static_k = tl.tensor(rng.standard_normal((4, 5, 2)), requires_grad=True)
    static_v = tl.tensor(rng.standard_normal((4, 5, 2)), requires_grad=True)
    key = tl.zeros(5, 2, 4, dtype=tl.float64)

    def run(q, static_k, static_v, in_proj_weight):
        out, weights = F.multi_head_attention_forward(
            q, key, key, 4, 2, in_proj_weight, layer.in_proj_bias, None, None, True, 0.0,
            layer.out_proj.weight, layer.out_proj.bias, static_k=static_k, static_v=static_v)
        return out.sum(-1) + (weights * weights).sum(-1).transpose(0, 1)

    assert gradcheck(run, (q, static_k, static_v, layer.in_proj_weight))


def test_static_kv_equal_the_projected_keys_and_values():
    """The definition: static_k = key W_k^T + b_k split into heads, (N·n_h, S, d)."""
    layer = nn.MultiheadAttention(8, 2, dtype=tl.float64, generator=tl.Generator(9))
    rng = np.random.default_rng(9)
    q, memory = tl.tensor(rng.standard_normal((4, 3, 8))), rng.standard_normal((6, 3, 8))
    w, b = layer.in_proj_weight.numpy(), layer.in_proj_bias.numpy()
    heads = [tl.tensor((memory @ w[r].T + b[r]).reshape(6, 6, 4).transpose(1, 0, 2))
             for r in (slice(8, 16), slice(16, 24))]
    blank = tl.zeros(6, 3, 8, dtype=tl.float64)
    out, weights = F.multi_head_attention_forward(
        q, blank, blank, 8, 2, layer.in_proj_weight, layer.in_proj_bias, None, None, False, 0.0,
        layer.out_proj.weight, layer.out_proj.bias, static_k=heads[0], static_v=heads[1])
    expected, expected_weights = layer(q, tl.tensor(memory), tl.tensor(memory))
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(weights.numpy(), expected_weights.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parity
def test_static_kv_errors_match_pytorch(torch):
    ref, ours_w = mha_pair(torch)
    ref_w = dict(ref.named_parameters())
    x = np.random.default_rng(10).standard_normal((3, 2, 8))
    bias = np.zeros((1, 1, 8))
    bad = {
        "static_k batch": ({"static_k": np.zeros((3, 3, 4))}, "static_k"),
        "static_v width": ({"static_v": np.zeros((4, 3, 3))}, "static_v"),
    }
    for kwargs, match in bad.values():
        with pytest.raises(AssertionError, match=match):
            call(F, ours_w, tl.tensor(x), tl.tensor(x), tl.tensor(x),
                 **{k: tl.tensor(v) for k, v in kwargs.items()})
        with pytest.raises(AssertionError, match=match):
            call(torch.nn.functional, ref_w, *(torch.tensor(x),) * 3,
                 **{k: torch.tensor(v) for k, v in kwargs.items()})
    static = np.zeros((4, 3, 4))
    with pytest.raises(AssertionError, match="bias cannot be added to static key"):
        F.multi_head_attention_forward(
            *(tl.tensor(x),) * 3, 8, 2, ours_w["in_proj_weight"], ours_w["in_proj_bias"],
            tl.tensor(bias), tl.tensor(bias), False, 0.0, ours_w["out_proj.weight"],
            ours_w["out_proj.bias"], static_k=tl.tensor(static))
    with pytest.raises(AssertionError, match="bias cannot be added to static key"):
        torch.nn.functional.multi_head_attention_forward(
            *(torch.tensor(x),) * 3, 8, 2, ref_w["in_proj_weight"], ref_w["in_proj_bias"],
            torch.tensor(bias), torch.tensor(bias), False, 0.0, ref_w["out_proj.weight"],
            ref_w["out_proj.bias"], static_k=torch.tensor(static))
    with pytest.raises(ValueError, match="as many keys as values"):
        call(F, ours_w, *(tl.tensor(x),) * 3, static_k=tl.tensor(np.zeros((4, 5, 4))))
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(2, 5\)"):
        call(F, ours_w, *(tl.tensor(x),) * 3, static_k=tl.tensor(np.zeros((4, 5, 4))),
             static_v=tl.tensor(np.zeros((4, 5, 4))),
             key_padding_mask=tl.tensor(np.zeros((2, 3), bool)))


def test_mha_shape_errors_name_the_layout_in_use():
    rng = np.random.default_rng(11)
    first = nn.MultiheadAttention(8, 2, batch_first=True)
    second = nn.MultiheadAttention(8, 2)
    q = tl.tensor(rng.standard_normal((3, 5, 6)).astype(np.float32))
    for layer, layout in ((first, r"\(N, L, E\)"), (second, r"\(L, N, E\)")):
        with pytest.raises(ValueError, match=f"of shape {layout} or \\(L, E\\)"):
            layer(q, q, q)
    x, other = tl.randn(3, 5, 8), tl.randn(4, 5, 8)
    with pytest.raises(ValueError, match=r"\(N, S, ·\) with N=3"):
        first(x, other, other)
    with pytest.raises(ValueError, match=r"\(S, N, ·\) with N=5, got \(4, 6, 8\)"):
        second(x, tl.randn(4, 6, 8), tl.randn(4, 6, 8))
    with pytest.raises(ValueError, match=r"\(S, ·\), got \(4, 8\) and \(5, 8\)"):
        first(tl.randn(3, 8), tl.randn(4, 8), tl.randn(5, 8))
    with pytest.raises(ValueError, match=r"\(L, N, E\)"):  # the function is sequence first
        F.multi_head_attention_forward(
            x, q, q, 8, 2, first.in_proj_weight, first.in_proj_bias, None, None, False, 0.0,
            first.out_proj.weight, first.out_proj.bias)
    out, _ = first(x, other[:3], other[:3])  # batch first: (N, L, E) with N = 3
    assert tuple(out.shape) == (3, 5, 8)
