"""Parity of chapter 4's layers and module system with PyTorch.

Each layer is built in tensorlib, its parameters are given random values, copied to the
matching torch layer through numpy, and both are run forward and backward with the same
input and the same random cotangent. Outputs and ALL gradients (the input's and every
parameter's) are compared, in float32 and in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib import nn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity
TF = torch.nn.functional

TOLERANCES = {
    np.float32: dict(rtol=2e-4, atol=2e-5),
    np.float64: dict(rtol=1e-9, atol=1e-11),
}
TORCH_DTYPE = {np.float32: torch.float32, np.float64: torch.float64}
DTYPES = [pytest.param(np.float32, id="float32"), pytest.param(np.float64, id="float64")]


# ----------------------------------------------------------------------------- helpers


def to_numpy(x) -> np.ndarray | None:
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x.numpy())


def in_dtype(module, dtype):
    """The tensorlib module with parameters of ``dtype`` (float32 is the default)."""
    return module.double() if dtype is np.float64 else module


def randomize(module, rng, dtype):
    """Give every parameter of a tensorlib module random values (through load_state_dict)."""
    state = {
        name: tl.tensor(rng.standard_normal(tuple(p.shape)).astype(dtype))
        for name, p in module.named_parameters()
    }
    if state:
        module.load_state_dict(state, strict=False)


def copy_parameters(source, target):
    """Copy a tensorlib module's parameters into the torch module of the same structure."""
    ours = dict(source.named_parameters())
    theirs = dict(target.named_parameters())
    assert list(ours) == list(theirs), (list(ours), list(theirs))
    with torch.no_grad():
        for name, p in ours.items():
            assert tuple(p.shape) == tuple(theirs[name].shape), name
            theirs[name].copy_(torch.from_numpy(to_numpy(p).copy()))


def run_both(ours, theirs, inputs, dtype, rng, fixed=()):
    """Forward and backward through both modules; compare outputs and every gradient.

    ``inputs`` are numpy arrays; those at positions in ``fixed`` (integer ids, targets) are
    passed without gradient.
    """
    tol = TOLERANCES[dtype]
    theirs.to(TORCH_DTYPE[dtype])
    xs_ours, xs_theirs = [], []
    for i, a in enumerate(inputs):
        if i in fixed:
            xs_ours.append(tl.tensor(a))
            xs_theirs.append(torch.from_numpy(a.copy()))
        else:
            a = a.astype(dtype)
            xs_ours.append(tl.tensor(a, requires_grad=True))
            xs_theirs.append(torch.tensor(a, requires_grad=True))
    out_ours, out_theirs = ours(*xs_ours), theirs(*xs_theirs)
    assert tuple(out_ours.shape) == tuple(out_theirs.shape)
    assert to_numpy(out_ours).dtype == dtype
    np.testing.assert_allclose(to_numpy(out_ours), to_numpy(out_theirs), **tol, err_msg="output")

    cotangent = rng.standard_normal(tuple(out_theirs.shape)).astype(dtype)
    (out_ours * tl.tensor(cotangent)).sum().backward()
    (out_theirs * torch.from_numpy(cotangent)).sum().backward()
    for i, (a, b) in enumerate(zip(xs_ours, xs_theirs, strict=True)):
        if i not in fixed:
            np.testing.assert_allclose(
                to_numpy(a.grad), to_numpy(b.grad), **tol, err_msg=f"input {i} grad"
            )
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        compare_grads(p.grad, theirs_params[name].grad, tol, f"{name} grad")


def compare_grads(ours, theirs, tol, what):
    """Equal gradients; an unused parameter may have None (torch) or zeros on either side."""
    if ours is None or theirs is None:
        other = theirs if ours is None else ours
        assert other is None or not np.any(to_numpy(other)), f"{what}: one side has no gradient"
        return
    np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), **tol, err_msg=what)


def check_layer(ours, theirs, inputs, dtype, seed=0, fixed=()):
    rng = np.random.default_rng(seed)
    ours = in_dtype(ours, dtype)
    randomize(ours, rng, dtype)
    theirs.to(TORCH_DTYPE[dtype])
    copy_parameters(ours, theirs)
    run_both(ours, theirs, inputs, dtype, rng, fixed)


def normal(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


# ----------------------------------------------------------------------------- layers


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
def test_linear(dtype, bias):
    check_layer(
        nn.Linear(4, 3, bias=bias), torch.nn.Linear(4, 3, bias=bias), [normal(1, 2, 5, 4)], dtype
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_embedding_with_repeated_ids(dtype):
    ids = np.array([[1, 3, 1, 1], [6, 0, 3, 1]], dtype=np.int64)
    check_layer(nn.Embedding(7, 3), torch.nn.Embedding(7, 3), [ids], dtype, fixed=(0,))


class TorchPositionalEmbedding(torch.nn.Module):
    """The learned position table PositionalEmbedding describes: x + W[:T]."""

    def __init__(self, context_length, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(context_length, dim))

    def forward(self, x):
        return x + self.weight[: x.shape[1]]


@pytest.mark.parametrize("dtype", DTYPES)
def test_positional_embedding(dtype):
    ours = nn.PositionalEmbedding(6, 3)
    names = [name for name, _ in ours.named_parameters()]
    assert len(names) == 1
    theirs = TorchPositionalEmbedding(6, 3)
    if names != ["weight"]:  # the table's name is the implementation's choice
        theirs.register_parameter(names[0], theirs._parameters.pop("weight"))
        theirs.forward = lambda x: x + getattr(theirs, names[0])[: x.shape[1]]
    check_layer(ours, theirs, [normal(2, 2, 4, 3)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "normalized, shape", [(5, (3, 5)), ((3, 4), (2, 3, 4)), ((2, 3, 2), (2, 2, 3, 2))]
)
def test_layer_norm(dtype, normalized, shape):
    check_layer(
        nn.LayerNorm(normalized), torch.nn.LayerNorm(normalized), [normal(3, *shape)], dtype
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_without_affine_and_custom_eps(dtype):
    ours = nn.LayerNorm(4, eps=1e-3, elementwise_affine=False)
    theirs = torch.nn.LayerNorm(4, eps=1e-3, elementwise_affine=False)
    check_layer(ours, theirs, [normal(4, 3, 4) * 0.01], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("normalized, shape", [(4, (2, 3, 4)), ((2, 3), (4, 2, 3))])
def test_rms_norm(dtype, normalized, shape):
    ours = nn.RMSNorm(normalized, eps=1e-6)
    theirs = torch.nn.RMSNorm(normalized, eps=1e-6)
    check_layer(ours, theirs, [normal(5, *shape)], dtype)


ACTIVATIONS = [
    ("ReLU", lambda: nn.ReLU(), lambda: torch.nn.ReLU()),
    ("GELU", lambda: nn.GELU(), lambda: torch.nn.GELU()),
    ("GELU-tanh", lambda: nn.GELU(approximate="tanh"), lambda: torch.nn.GELU(approximate="tanh")),
    ("Tanh", lambda: nn.Tanh(), lambda: torch.nn.Tanh()),
    ("Sigmoid", lambda: nn.Sigmoid(), lambda: torch.nn.Sigmoid()),
    ("SiLU", lambda: nn.SiLU(), lambda: torch.nn.SiLU()),
    ("Softmax1", lambda: nn.Softmax(dim=1), lambda: torch.nn.Softmax(dim=1)),
    ("Softmax-1", lambda: nn.Softmax(dim=-1), lambda: torch.nn.Softmax(dim=-1)),
    ("LogSoftmax", lambda: nn.LogSoftmax(dim=-1), lambda: torch.nn.LogSoftmax(dim=-1)),
    ("Flatten", lambda: nn.Flatten(), lambda: torch.nn.Flatten()),
    ("Flatten0-1", lambda: nn.Flatten(0, 1), lambda: torch.nn.Flatten(0, 1)),
    ("Identity", lambda: nn.Identity(), lambda: torch.nn.Identity()),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, ours, theirs", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_parameter_free_layers(dtype, name, ours, theirs):
    x = normal(6, 2, 3, 4) * 3
    x[np.abs(x) < 1e-3] = 0.5  # ReLU's kink
    check_layer(ours(), theirs(), [x], dtype)


CONV_CASES = [
    # in, out, kernel, stride, padding, bias, H, W
    (1, 8, 3, 2, 1, True, 28, 28),
    (2, 3, 3, 1, 0, True, 6, 5),
    (2, 3, 3, 2, 1, True, 7, 7),
    (1, 2, (2, 3), 1, 0, True, 5, 6),
    (2, 2, (3, 2), (2, 1), (1, 0), False, 6, 5),
    (3, 4, 1, 1, 0, True, 4, 4),
    (2, 3, 5, 3, 2, True, 9, 8),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cin, cout, k, s, p, bias, h, w", CONV_CASES)
def test_conv2d(dtype, cin, cout, k, s, p, bias, h, w):
    ours = nn.Conv2d(cin, cout, k, stride=s, padding=p, bias=bias)
    theirs = torch.nn.Conv2d(cin, cout, k, stride=s, padding=p, bias=bias)
    check_layer(ours, theirs, [normal(7, 2, cin, h, w)], dtype)


POOL_CASES = [
    # kernel, stride, padding, H, W
    (2, None, 0, 6, 6),
    (3, 1, 0, 5, 4),
    ((2, 3), (1, 2), 0, 5, 7),
    (3, 2, 1, 7, 6),
    (2, 2, 1, 5, 5),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k, s, p, h, w", POOL_CASES)
@pytest.mark.parametrize("kind", ["MaxPool2d", "AvgPool2d"])
def test_pools(dtype, kind, k, s, p, h, w):
    x = np.random.default_rng(8).permutation(2 * 3 * h * w).reshape(2, 3, h, w) / 10.0  # no ties
    ours = getattr(nn, kind)(k, stride=s, padding=p)
    theirs = getattr(torch.nn, kind)(k, stride=s, padding=p)
    check_layer(ours, theirs, [x], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_and_nll(dtype, reduction):
    target = np.array([0, 3, 1, 1, 2], dtype=np.int64)
    logits = normal(9, 5, 4) * 2
    check_layer(
        nn.CrossEntropyLoss(reduction=reduction),
        torch.nn.CrossEntropyLoss(reduction=reduction),
        [logits, target],
        dtype,
        fixed=(1,),
    )
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    check_layer(
        nn.NLLLoss(reduction=reduction),
        torch.nn.NLLLoss(reduction=reduction),
        [logp, target],
        dtype,
        fixed=(1,),
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_mse_and_bce_with_logits(dtype):
    check_layer(nn.MSELoss(), torch.nn.MSELoss(), [normal(10, 3, 4), normal(11, 3, 4)], dtype)
    labels = (normal(12, 3, 4) > 0).astype(dtype)
    check_layer(
        nn.BCEWithLogitsLoss(),
        torch.nn.BCEWithLogitsLoss(),
        [normal(13, 3, 4) * 4, labels],
        dtype,
        fixed=(1,),
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("activation", ["ReLU", "GELU", "Tanh"])
def test_mlp(dtype, activation):
    ours = nn.MLP(5, [8, 6], 3, activation=getattr(nn, activation))
    theirs = torch.nn.Sequential(
        torch.nn.Linear(5, 8), getattr(torch.nn, activation)(),
        torch.nn.Linear(8, 6), getattr(torch.nn, activation)(),
        torch.nn.Linear(6, 3),
    )
    check_layer(ours, theirs, [normal(19, 4, 5)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_small_convnet_end_to_end(dtype):
    def net(ns):
        return ns.Sequential(
            ns.Conv2d(1, 4, 3, padding=1), ns.ReLU(), ns.MaxPool2d(2),
            ns.Conv2d(4, 4, (3, 2), stride=(1, 2)), ns.GELU(), ns.AvgPool2d(2, stride=1),
            ns.Flatten(), ns.Linear(4 * 1 * 1, 6), ns.LayerNorm(6), ns.Tanh(), ns.Linear(6, 3),
        )

    ours, theirs = net(nn), net(torch.nn)
    check_layer(ours, theirs, [normal(14, 2, 1, 8, 8)], dtype)


# ----------------------------------------------------------------------------- functional


@pytest.mark.parametrize("dtype", DTYPES)
def test_functional_forms_match_torch(dtype):
    tol = TOLERANCES[dtype]
    x = normal(15, 2, 2, 6, 5).astype(dtype)
    w = normal(16, 3, 2, 3, 2).astype(dtype)
    b = normal(17, 3).astype(dtype)
    v = normal(18, 3, 5).astype(dtype)
    pairs = [
        (
            F.conv2d(tl.tensor(x), tl.tensor(w), tl.tensor(b), stride=(2, 1), padding=1),
            TF.conv2d(
                torch.from_numpy(x),
                torch.from_numpy(w),
                torch.from_numpy(b),
                stride=(2, 1),
                padding=1,
            ),
        ),
        (F.max_pool2d(tl.tensor(x), 2), TF.max_pool2d(torch.from_numpy(x), 2)),
        (
            F.avg_pool2d(tl.tensor(x), (2, 1), stride=1),
            TF.avg_pool2d(torch.from_numpy(x), (2, 1), stride=1),
        ),
        (F.layer_norm(tl.tensor(x), (6, 5)), TF.layer_norm(torch.from_numpy(x), (6, 5))),
        (
            F.linear(tl.tensor(x), tl.tensor(v), tl.tensor(b)),
            TF.linear(torch.from_numpy(x), torch.from_numpy(v), torch.from_numpy(b)),
        ),
    ]
    for i, (a, b_) in enumerate(pairs):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b_), **tol, err_msg=f"pair {i}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, widths, value",
    [
        ((2, 3, 4), (1, 2), 0.0),
        ((2, 3, 4), (1, 2, 0, 1), -1.5),
        ((2, 3, 4, 5), (2, 0, 1, 1, 0, 1), 3.0),
        ((2, 3, 4), (-1, 2, 1, -2), 0.5),
    ],
)
def test_pad_matches_torch(dtype, shape, widths, value):
    tol = TOLERANCES[dtype]
    x = normal(40, *shape).astype(dtype)
    ours, theirs = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out_ours, out_theirs = (
        F.pad(ours, widths, value=value),
        TF.pad(theirs, widths, mode="constant", value=value),
    )
    assert tuple(out_ours.shape) == tuple(out_theirs.shape)
    np.testing.assert_array_equal(to_numpy(out_ours), to_numpy(out_theirs))
    cotangent = normal(41, *out_theirs.shape).astype(dtype)
    (out_ours * tl.tensor(cotangent)).sum().backward()
    (out_theirs * torch.from_numpy(cotangent)).sum().backward()
    np.testing.assert_allclose(to_numpy(ours.grad), to_numpy(theirs.grad), **tol)


@pytest.mark.parametrize("num_classes", [-1, 7])
def test_one_hot_matches_torch(num_classes):
    ids = np.array([[0, 4, 2], [4, 4, 1]], dtype=np.int64)
    ours, theirs = (
        F.one_hot(tl.tensor(ids), num_classes),
        TF.one_hot(torch.from_numpy(ids), num_classes),
    )
    assert to_numpy(ours).dtype == np.int64 and theirs.dtype == torch.int64
    np.testing.assert_array_equal(to_numpy(ours), to_numpy(theirs))


# ----------------------------------------------------------------------------- module system


def build_model(ns):
    """The same architecture in tensorlib (ns = tensorlib.nn) and torch (ns = torch.nn)."""

    class Block(ns.Module):
        def __init__(self):
            super().__init__()
            self.norm = ns.LayerNorm(4)
            self.ff = ns.Sequential(ns.Linear(4, 8), ns.GELU(), ns.Linear(8, 4))

        def forward(self, x):
            return x + self.ff(self.norm(x))

    class Net(ns.Module):
        def __init__(self):
            super().__init__()
            self.emb = ns.Embedding(10, 4)
            self.blocks = ns.ModuleList([Block(), Block()])
            self.heads = ns.ModuleDict({"lm": ns.Linear(4, 10, bias=False), "aux": ns.Linear(4, 2)})
            self.heads["lm"].weight = self.emb.weight  # tied

        def forward(self, ids):
            x = self.emb(ids)
            for block in self.blocks:
                x = block(x)
            return self.heads["lm"](x)

    return Net()


def test_module_tree_names_match_torch():
    ours, theirs = build_model(nn), build_model(torch.nn)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))
    assert set(ours.state_dict()) == set(theirs.state_dict())


def test_buffers_match_torch():
    def with_buffers(ns, tensor):
        m = ns.Module()
        m.register_buffer("kept", tensor(np.zeros(2)))
        m.register_buffer("scratch", tensor(np.zeros(3)), persistent=False)
        m.child = ns.Linear(2, 2)
        return m

    ours = with_buffers(nn, tl.tensor)
    theirs = with_buffers(torch.nn, torch.from_numpy)
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict())


@pytest.mark.parametrize("dtype", DTYPES)
def test_tied_model_forward_and_gradients_match_torch(dtype):
    ids = np.array([[1, 4, 1], [9, 0, 4]], dtype=np.int64)
    check_layer(build_model(nn), build_model(torch.nn), [ids], dtype, fixed=(0,))


def test_state_dict_moves_between_tensorlib_and_torch():
    rng = np.random.default_rng(18)
    ours, theirs = build_model(nn), build_model(torch.nn)
    theirs.load_state_dict(
        {k: torch.from_numpy(to_numpy(v).copy()) for k, v in ours.state_dict().items()}
    )
    ids = rng.integers(0, 10, size=(2, 5))
    out_ours = to_numpy(ours(tl.tensor(ids)))
    out_theirs = to_numpy(theirs(torch.from_numpy(ids)))
    np.testing.assert_allclose(out_ours, out_theirs, **TOLERANCES[np.float32])
    fresh = build_model(nn)
    fresh.load_state_dict(
        {k: tl.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    )
    np.testing.assert_array_equal(to_numpy(fresh(tl.tensor(ids))), out_ours)


def test_repr_matches_torch():
    def tree(ns):
        return ns.Sequential(
            ns.Linear(4, 3), ns.ReLU(), ns.Sequential(ns.Linear(3, 2, bias=False), ns.Tanh()),
            ns.ModuleList([ns.Identity(), ns.Sigmoid()]),
        )

    assert repr(tree(nn)) == repr(tree(torch.nn))


def test_default_init_distributions_match_torch():
    """Same family and bounds as torch: compare the sorted draws' quantiles, not the bits."""
    torch.manual_seed(0)
    tl.manual_seed(0)
    pairs = [
        (nn.Linear(50, 200).weight, torch.nn.Linear(50, 200).weight),
        (nn.Conv2d(3, 32, 3).weight, torch.nn.Conv2d(3, 32, 3).weight),
        (nn.Embedding(100, 50).weight, torch.nn.Embedding(100, 50).weight),
    ]
    for i, (a, b) in enumerate(pairs):
        qa = np.quantile(to_numpy(a), [0.05, 0.25, 0.5, 0.75, 0.95])
        qb = np.quantile(to_numpy(b), [0.05, 0.25, 0.5, 0.75, 0.95])
        scale = np.abs(to_numpy(b)).max()
        np.testing.assert_allclose(qa, qb, atol=0.12 * scale, err_msg=f"pair {i}")


REPR_CASES = [  # layers whose every constructor argument exists in both libraries
    "Linear(4, 3, bias=False)", "Conv2d(2, 4, (2, 3), stride=(2, 1), padding=1, bias=False)",
    "AvgPool2d(2)", "AvgPool2d((2, 3), stride=1)", "RMSNorm(4, eps=1e-6)", "Embedding(10, 4)",
    "GELU()", 'GELU(approximate="tanh")', "Softmax(dim=1)", "LogSoftmax(dim=-1)", "Flatten()",
    "Flatten(0, 2)", "Identity()", "SiLU()", "Sigmoid()", "Tanh()", "ReLU()", "CrossEntropyLoss()",
    "MSELoss()", "NLLLoss()", "BCEWithLogitsLoss()", 'ModuleDict({"a": ReLU(), "b": Linear(2, 2)})',
]


@pytest.mark.parametrize("expression", REPR_CASES)
def test_layer_repr_matches_torch(expression):
    ours = eval(expression, {name: getattr(nn, name) for name in dir(nn)})
    theirs = eval(expression, {name: getattr(torch.nn, name) for name in dir(torch.nn)})
    assert repr(ours) == repr(theirs)


# ----------------------------------------------------------------------------- property-based


@st.composite
def conv_configs(draw):
    kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    ph, pw = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    h = draw(st.integers(max(1, kh - 2 * ph), 8))
    w = draw(st.integers(max(1, kw - 2 * pw), 8))
    cin, cout = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    bias = draw(st.booleans())
    return cin, cout, (kh, kw), (sh, sw), (ph, pw), bias, h, w


@settings(max_examples=30, deadline=None, derandomize=True)
@given(conv_configs(), st.integers(0, 2**16))
def test_conv2d_random_configurations(config, seed):
    cin, cout, k, s, p, bias, h, w = config
    ours = nn.Conv2d(cin, cout, k, stride=s, padding=p, bias=bias)
    theirs = torch.nn.Conv2d(cin, cout, k, stride=s, padding=p, bias=bias)
    check_layer(ours, theirs, [normal(seed, 2, cin, h, w)], np.float64, seed=seed)


@st.composite
def pool_configs(draw):
    kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    # torch: padding <= kernel/2
    ph, pw = draw(st.integers(0, kh // 2)), draw(st.integers(0, kw // 2))
    h = draw(st.integers(max(1, kh - 2 * ph), 8))
    w = draw(st.integers(max(1, kw - 2 * pw), 8))
    return (kh, kw), (sh, sw), (ph, pw), h, w


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    pool_configs(),
    st.sampled_from(["MaxPool2d", "AvgPool2d"]),
    st.booleans(),
    st.booleans(),
    st.integers(0, 2**16),
)
def test_pools_random_configurations(config, kind, ceil_mode, count_include_pad, seed):
    k, s, p, h, w = config
    x = np.random.default_rng(seed).permutation(2 * 2 * h * w).reshape(2, 2, h, w) / 5.0  # no ties
    options = dict(stride=s, padding=p, ceil_mode=ceil_mode)
    if kind == "AvgPool2d":
        options["count_include_pad"] = count_include_pad
    check_layer(
        getattr(nn, kind)(k, **options),
        getattr(torch.nn, kind)(k, **options),
        [x],
        np.float64,
        seed=seed,
    )


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(1, 3), st.integers(0, 2**16)
)
def test_layer_norm_random_shapes(shape, trailing, seed):
    trailing = min(trailing, len(shape))
    normalized = tuple(shape[-trailing:])
    check_layer(
        nn.LayerNorm(normalized),
        torch.nn.LayerNorm(normalized),
        [normal(seed, *shape) * 3 + 1],
        np.float64,
        seed=seed,
    )


# ----------------------------------------------------------------------------- review fixes


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize(
    "k, d, padding", [(3, 1, "same"), (4, 1, "same"), ((2, 5), (2, 1), "same"), (3, 1, "valid")]
)
def test_conv2d_padding_strings(dtype, k, d, padding):
    ours = nn.Conv2d(2, 3, k, padding=padding, dilation=d)
    theirs = torch.nn.Conv2d(2, 3, k, padding=padding, dilation=d)
    check_layer(ours, theirs, [normal(21, 2, 2, 7, 6)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind, args", [
    ("Conv2d", (2, 3, 3)), ("MaxPool2d", (2,)), ("AvgPool2d", (3, 2, 1)),
])
def test_unbatched_input(dtype, kind, args):
    x = np.random.default_rng(22).permutation(2 * 7 * 6).reshape(2, 7, 6) / 10.0  # no ties
    check_layer(getattr(nn, kind)(*args), getattr(torch.nn, kind)(*args), [x], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "k, s, p, h, w",
    [(2, 2, 0, 5, 7), (3, 2, 1, 6, 6), (3, 3, 0, 7, 8), (2, 1, 1, 4, 5), (3, 2, 1, 5, 4)],
)
@pytest.mark.parametrize("kind", ["MaxPool2d", "AvgPool2d", "AvgPool2d-exclude"])
def test_pools_ceil_mode(dtype, kind, k, s, p, h, w):
    x = np.random.default_rng(23).permutation(2 * 3 * h * w).reshape(2, 3, h, w) / 10.0  # no ties
    if kind == "MaxPool2d":
        ours, theirs = (
            nn.MaxPool2d(k, s, p, ceil_mode=True),
            torch.nn.MaxPool2d(k, s, p, ceil_mode=True),
        )
    else:
        include = kind == "AvgPool2d"
        ours = nn.AvgPool2d(k, s, p, ceil_mode=True, count_include_pad=include)
        theirs = torch.nn.AvgPool2d(k, s, p, ceil_mode=True, count_include_pad=include)
    check_layer(ours, theirs, [x], dtype)


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_features, out_features", [(0, 3), (4, 0)])
def test_zero_size_linear(dtype, in_features, out_features):
    check_layer(nn.Linear(in_features, out_features), torch.nn.Linear(in_features, out_features),
                [normal(24, 2, in_features)], dtype)


def test_module_to_int_dtype_is_refused_like_torch():
    with pytest.raises(TypeError, match="only accepts floating point"):
        torch.nn.Linear(2, 3).to(torch.int64)
    with pytest.raises(TypeError, match="only accepts floating point"):
        nn.Linear(2, 3).to(tl.int64)


def test_embedding_padding_idx_range_like_torch():
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        TF.embedding(torch.tensor([1]), torch.zeros(5, 3), padding_idx=7)
    with pytest.raises(ValueError, match="padding_idx must be within num_embeddings"):
        F.embedding(tl.tensor([1]), tl.zeros(5, 3), padding_idx=7)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_torch_state_dict_loads_into_the_tensorlib_model(dtype):
    """A torch model's own state_dict (torch tensors, not numpy) loads directly: every key, equal
    values."""
    torch.manual_seed(0)
    theirs = build_model(torch.nn).to(TORCH_DTYPE[dtype])
    ours = in_dtype(build_model(nn), dtype)
    state = theirs.state_dict()
    assert all(type(value) is torch.Tensor for value in state.values())
    result = ours.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    loaded = ours.state_dict()
    assert list(loaded) == list(state)
    for key, value in state.items():
        assert to_numpy(loaded[key]).dtype == dtype, key
        np.testing.assert_array_equal(to_numpy(loaded[key]), value.numpy(), err_msg=key)
    ids = np.array([[1, 7, 3], [9, 0, 3]], dtype=np.int64)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(ids)).numpy()
    np.testing.assert_allclose(to_numpy(ours(tl.tensor(ids))), expected, **TOLERANCES[dtype])


def test_a_torch_tensor_that_cannot_become_an_array_is_named_with_its_full_type():
    theirs, ours = torch.nn.Linear(3, 2), nn.Linear(3, 2)
    with pytest.raises(
        TypeError,
        match=r"the value for key 'weight', a torch\.nn\.parameter\.Parameter, cannot be converted",
    ):
        # Parameters require grad: torch refuses numpy()
        ours.load_state_dict(dict(theirs.named_parameters()))
    ours.load_state_dict({key: value.detach() for key, value in theirs.named_parameters()})
    np.testing.assert_array_equal(to_numpy(ours.weight), theirs.weight.detach().numpy())


# ----------------------------------------------------------------------------- saved values changed
# in place Each layer's Function declares ``reads``: which saved values each gradient reads.
# Changing in
# place a value that no needed gradient reads is allowed (torch allows it for the ops that save
# only what the needed gradients use); changing one that is read raises, naming the node.

CHANGED_WEIGHT_CASES = {
    "Linear": (lambda m: m.Linear(3, 2), lambda rng: rng.standard_normal((4, 3))),
    "RMSNorm": (lambda m: m.RMSNorm(3), lambda rng: rng.standard_normal((4, 3))),
    "Embedding": (
        lambda m: m.Embedding(5, 3),
        lambda rng: np.array([[1, 4], [4, 0]], dtype=np.int64),
    ),
}


def forward_both(build, make_input, seed=7):
    """The same float64 layer in tensorlib and torch, run on the same input (without grad) with a
    random cotangent."""
    rng = np.random.default_rng(seed)
    ours, theirs = build(nn).double(), build(torch.nn).double()
    randomize(ours, rng, np.float64)
    copy_parameters(ours, theirs)
    data = make_input(rng)
    x_ours, x_theirs = tl.tensor(data.copy()), torch.from_numpy(data.copy())
    out_ours, out_theirs = ours(x_ours), theirs(x_theirs)
    cotangent = rng.standard_normal(tuple(out_theirs.shape))
    loss_ours = (out_ours * tl.tensor(cotangent)).sum()
    loss_theirs = (out_theirs * torch.from_numpy(cotangent)).sum()
    return ours, theirs, x_ours, x_theirs, loss_ours, loss_theirs


def assert_same_parameter_grads(ours, theirs):
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        compare_grads(p.grad, theirs_params[name].grad, TOLERANCES[np.float64], f"{name} grad")


@pytest.mark.parametrize("layer", list(CHANGED_WEIGHT_CASES))
def test_changing_the_weight_before_backward_is_allowed_when_no_needed_gradient_reads_it(layer):
    """x without grad: the weight's gradient reads x (or the ids, or a saved x̂), not the weight, as
    in torch."""
    ours, theirs, _, _, loss_ours, loss_theirs = forward_both(*CHANGED_WEIGHT_CASES[layer])
    with tl.no_grad():
        ours.weight -= 0.1
    with torch.no_grad():
        theirs.weight -= 0.1
    loss_ours.backward()
    loss_theirs.backward()
    np.testing.assert_array_equal(to_numpy(ours.weight), theirs.weight.detach().numpy())
    assert_same_parameter_grads(ours, theirs)


@pytest.mark.parametrize(
    "layer, node, index", [("Linear", "LinearBackward", 0), ("Embedding", "EmbeddingBackward", 1)]
)
def test_changing_the_input_a_weight_gradient_reads_raises_as_in_torch(layer, node, index):
    """x (or the ids) is read by the weight's gradient: both libraries refuse to backward."""
    _, _, x_ours, x_theirs, loss_ours, loss_theirs = forward_both(*CHANGED_WEIGHT_CASES[layer])
    x_ours.add_(1)
    x_theirs.add_(1)
    with pytest.raises(
        RuntimeError,
        match=rf"modified by an inplace operation: .*\(its input {index}\) saved for the backward "
              rf"of {node}",
    ):
        loss_ours.backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss_theirs.backward()


STRICTER_IN_TORCH_CASES = {
    "Conv2d weight": (
        lambda m: m.Conv2d(2, 3, 3, padding=1),
        lambda rng: rng.standard_normal((2, 2, 5, 5)),
        "weight",
    ),
    "LayerNorm weight": (
        lambda m: m.LayerNorm(3),
        lambda rng: rng.standard_normal((4, 3)),
        "weight",
    ),
    "LayerNorm input": (lambda m: m.LayerNorm(3), lambda rng: rng.standard_normal((4, 3)), "input"),
}


@pytest.mark.parametrize("case", list(STRICTER_IN_TORCH_CASES))
def test_a_change_no_needed_gradient_reads_keeps_the_recorded_gradients_where_torch_refuses(case):
    """x without grad. torch's convolution and layer norm save every input whatever is needed,
    so torch refuses here; ours read only what the needed gradients read (W̄ reads X_col,
    γ̄ and β̄ read the saved x̂), so backward gives the gradients of the forward as it ran:
    torch's gradients without the change."""
    build, make_input, changed = STRICTER_IN_TORCH_CASES[case]
    ours, theirs, x_ours, x_theirs, loss_ours, loss_theirs = forward_both(build, make_input)
    with tl.no_grad():
        if changed == "weight":
            ours.weight -= 0.1
        else:
            x_ours.add_(1)
    loss_ours.backward()
    loss_theirs.backward()  # nothing changed on torch's side
    assert_same_parameter_grads(ours, theirs)
    _, theirs_again, _, x_again, _, loss_again = forward_both(build, make_input)
    with torch.no_grad():
        (theirs_again.weight if changed == "weight" else x_again).add_(0.1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss_again.backward()


def _deepcopy_facts(lib):
    """What copy.deepcopy keeps of a parameter, a plain tensor and a module with a gradient."""
    import copy

    param = lib.nn.Parameter(lib.ones(2))
    param.grad = lib.ones(2)
    plain = lib.ones(2, requires_grad=True)
    plain.grad = lib.ones(2)
    model = lib.nn.Linear(2, 2)
    model(lib.ones(1, 2)).sum().backward()
    tied = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 2))
    tied[1].weight = tied[0].weight
    tied_copy = copy.deepcopy(tied)
    return {
        "parameter keeps grad": copy.deepcopy(param).grad is not None,
        "parameter class": type(copy.deepcopy(param)).__name__,
        "parameter requires_grad": copy.deepcopy(param).requires_grad,
        "frozen parameter requires_grad": copy.deepcopy(
            lib.nn.Parameter(lib.ones(2), requires_grad=False)
        ).requires_grad,
        "plain tensor keeps grad": copy.deepcopy(plain).grad is not None,
        "module keeps grads": copy.deepcopy(model).weight.grad is not None,
        "tie kept": tied_copy[0].weight is tied_copy[1].weight,
        "copy is new": tied_copy[0].weight is not tied[0].weight,
    }


def test_deepcopy_of_parameters_tensors_and_modules_matches_pytorch():
    ours, theirs = _deepcopy_facts(tl), _deepcopy_facts(torch)
    assert ours == theirs
    assert ours["parameter keeps grad"] is False and ours["tie kept"] is True
