"""Chapter 4, section "Second-order gradients through the layers": the recorded backward
(``backward_graph``, run by ``create_graph=True``) of layer_norm, rms_norm, batch_norm, the
convolutions and transposed convolutions (1-D, 2-D, 3-D; stride, padding, dilation, groups,
output_padding), unfold and fold, embedding, dropout, constant pad, and average and max pooling.

Gradgradchecks in float64 (the recorded first derivative differentiated again, in the inputs and
in the upstream gradient, against central differences of the first-order gradient), parity with
PyTorch 2.13's double backward (every case but dropout, whose mask PyTorch draws differently, and
a WGAN-GP penalty on a convolutional critic), and the first-order pass unchanged (it never calls
``backward_graph``, and gives the same bits)."""

from __future__ import annotations

import numpy as np
import pytest
from _gradgrad import central as _central
from _gradgrad import check_gradgrad, first_order
from _gradgrad import probe as _probe
from _gradgrad import upstream as _upstream

import tensorlib as tl
from tensorlib.nn.functional import layers

RNG = np.random.default_rng(40)
X2 = RNG.standard_normal((2, 4, 5, 5))
X1 = RNG.standard_normal((2, 4, 7))
X3D = RNG.standard_normal((1, 2, 4, 4, 3))
W2 = RNG.standard_normal((6, 4, 3, 3)) * 0.5
W2G = RNG.standard_normal((6, 2, 2, 3)) * 0.5  # groups=2
W1 = RNG.standard_normal((3, 4, 3)) * 0.5
W3D = RNG.standard_normal((3, 2, 2, 2, 2)) * 0.5
B6, B3 = RNG.standard_normal(6), RNG.standard_normal(3)
WT2 = RNG.standard_normal((4, 3, 3, 3)) * 0.5  # transposed: (in, out/groups, kh, kw)
WT2G = RNG.standard_normal((4, 2, 2, 3)) * 0.5  # groups=2: out = 4
WT1 = RNG.standard_normal((4, 2, 3)) * 0.5
WT3D = RNG.standard_normal((2, 3, 2, 2, 2)) * 0.5
XT = RNG.standard_normal((2, 4, 3, 4))
XN = RNG.standard_normal((3, 2, 4))  # normalised over (2, 4) or (4,)
GAMMA, BETA = 1 + 0.3 * RNG.standard_normal((2, 4)), RNG.standard_normal((2, 4))
GAMMA4 = 1 + 0.3 * RNG.standard_normal(4)
XB = RNG.standard_normal((4, 3, 2))
WB, BB = 1 + 0.3 * RNG.standard_normal(3), RNG.standard_normal(3)
TABLE = RNG.standard_normal((6, 3))
IDS = np.array([[1, 4, 1], [0, 5, 1]])
XP = RNG.standard_normal((2, 3, 4))
RUN_MEAN, RUN_VAR = RNG.standard_normal(3), 0.5 + RNG.random(3)
V2 = RNG.standard_normal((3, 6, 2, 2)) * 0.5
COLS = RNG.standard_normal((2, 8, 9))  # fold: C = 2, a 2x2 kernel, 3x3 blocks


def _f(lib):
    return lib.nn.functional


def _dropout(L, a):
    """Dropout with a fixed mask: tensorlib's generator seeded for every call."""
    return _f(L).dropout(a, 0.4, generator=L.Generator().manual_seed(3)) ** 2


# name -> (op on (library, *inputs), input arrays, indices of the inputs that require grad)
CASES = {
    "layer_norm-affine": (lambda L, a, w, b: _f(L).layer_norm(a, (2, 4), w, b) ** 2,
                          [XN, GAMMA, BETA], (0, 1, 2)),
    "layer_norm-plain": (lambda L, a: _f(L).layer_norm(a, (4,), eps=1e-3).exp(), [XN], (0,)),
    "layer_norm-weight": (lambda L, a, w: _f(L).layer_norm(a, (4,), w).sin(), [XN, GAMMA4],
                          (0, 1)),
    "layer_norm-linear": (lambda L, a, w, b: _f(L).layer_norm(a, (2, 4), w, b),
                          [XN, GAMMA, BETA], (0, 1, 2)),
    "rms_norm-weight": (lambda L, a, w: _f(L).rms_norm(a, (4,), w, eps=1e-4) ** 2,
                        [XN, GAMMA4], (0, 1)),
    "rms_norm-plain": (lambda L, a: _f(L).rms_norm(a, (2, 4)).tanh(), [XN], (0,)),
    "rms_norm-unbatched": (lambda L, a, w: _f(L).rms_norm(a, (4,), w, eps=1e-5) ** 2,
                           [XN[0, 0], GAMMA4], (0, 1)),
    "batch_norm-train": (lambda L, a, w, b: _f(L).batch_norm(
        a, None, None, w, b, training=True) ** 2, [XB, WB, BB], (0, 1, 2)),
    "batch_norm-train-plain": (lambda L, a: _f(L).batch_norm(
        a, None, None, training=True, eps=1e-3).sin(), [XB], (0,)),
    "batch_norm-eval": (lambda L, a, w, b: _f(L).batch_norm(
        a, L.tensor(RUN_MEAN), L.tensor(RUN_VAR), w, b) ** 2, [XB, WB, BB], (0, 1, 2)),
    "group_norm": (lambda L, a, w, b: _f(L).group_norm(a, 2, w, b[:4]) ** 2,
                   [X2[:, :, :3, :3], GAMMA4, B6], (0, 1, 2)),
    "instance_norm": (lambda L, a, w: _f(L).instance_norm(a, weight=w).sin(),
                      [X2[:, :, :3, :3], GAMMA4], (0, 1)),
    "conv2d": (lambda L, a, w, b: _f(L).conv2d(a, w, b), [X2, W2, B6], (0, 1, 2)),
    "conv2d-stride-padding": (lambda L, a, w: _f(L).conv2d(a, w, stride=2, padding=1) ** 2,
                              [X2, W2], (0, 1)),
    "conv2d-dilation": (lambda L, a, w: _f(L).conv2d(a, w, padding=(2, 1), dilation=(2, 1)),
                        [X2, W2], (0, 1)),
    "conv2d-groups": (lambda L, a, w, b: _f(L).conv2d(a, w, b, stride=(1, 2), groups=2).tanh(),
                      [X2, W2G, B6], (0, 1, 2)),
    "conv2d-same-even": (lambda L, a, w: _f(L).conv2d(a, w, padding="same", groups=2),
                         [X2, W2G], (0, 1)),
    "conv2d-uneven": (lambda L, a, w: _f(L).conv2d(a, w, stride=3, padding=1, dilation=2),
                      [X2[:, :, :, :4], W2], (0, 1)),
    "conv2d-weight-only": (lambda L, a, w: _f(L).conv2d(a, w, stride=2) ** 2, [X2, W2], (1,)),
    "conv1d": (lambda L, a, w, b: _f(L).conv1d(a, w, b, stride=2, padding=2, dilation=2) ** 2,
               [X1, W1, B3], (0, 1, 2)),
    "conv3d": (lambda L, a, w: _f(L).conv3d(a, w, padding=1, stride=(2, 1, 1)) ** 2,
               [X3D, W3D], (0, 1)),
    "conv_transpose2d": (lambda L, a, w, b: _f(L).conv_transpose2d(a, w, b) ** 2,
                         [XT, WT2, B3], (0, 1, 2)),
    "conv_transpose2d-stride": (lambda L, a, w: _f(L).conv_transpose2d(
        a, w, stride=2, padding=1, output_padding=1), [XT, WT2], (0, 1)),
    "conv_transpose2d-groups": (lambda L, a, w: _f(L).conv_transpose2d(
        a, w, stride=(2, 1), padding=(0, 1), groups=2, dilation=(1, 2)) ** 2, [XT, WT2G], (0, 1)),
    "conv_transpose2d-dilated-extra": (lambda L, a, w: _f(L).conv_transpose2d(
        a, w, stride=1, output_padding=1, dilation=2).tanh(), [XT, WT2], (0, 1)),
    "conv_transpose1d": (lambda L, a, w: _f(L).conv_transpose1d(
        a, w, stride=3, padding=1, output_padding=2) ** 2, [X1, WT1], (0, 1)),
    "conv_transpose3d": (lambda L, a, w: _f(L).conv_transpose3d(
        a, w, stride=2, padding=(1, 0, 0)) ** 2, [X3D, WT3D], (0, 1)),
    "conv-of-conv": (lambda L, a, w, v: _f(L).conv2d(
        _f(L).conv2d(a, w, padding=1).tanh(), v, stride=2), [X2, W2, V2],
        (0, 1, 2)),
    "unfold": (lambda L, a: _f(L).unfold(a, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
               ** 2, [X2], (0,)),
    "fold": (lambda L, c: _f(L).fold(c, (5, 5), 2, padding=1, stride=2).exp(), [COLS], (0,)),
    "embedding": (lambda L, w: _f(L).embedding(L.tensor(IDS), w) ** 2, [TABLE], (0,)),
    "embedding-padding": (lambda L, w: _f(L).embedding(L.tensor(IDS), w, padding_idx=1) ** 3,
                          [TABLE], (0,)),
    # linear in the table: scale_grad_by_freq's "gradient" is not the lookup's derivative, so
    # through a nonlinearity the second pass (which meets the lookup's node again) is not one
    "embedding-freq": (lambda L, w: _f(L).embedding(
        L.tensor(IDS), w, padding_idx=-2, scale_grad_by_freq=True) * L.tensor(_probe((2, 3, 3))),
        [TABLE], (0,)),
    "dropout": (_dropout, [XP], (0,)),
    "pad": (lambda L, a: _f(L).pad(a, (1, 2, 0, 1), value=0.5) ** 2, [XP], (0,)),
    "pad-crop": (lambda L, a: _f(L).pad(a, (-1, 2, 1, -2, 1, 0)).exp(), [XP], (0,)),
    "avg_pool2d": (lambda L, a: _f(L).avg_pool2d(a, 2) ** 2, [X2], (0,)),
    "avg_pool2d-options": (lambda L, a: _f(L).avg_pool2d(
        a, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False) ** 2, [X2], (0,)),
    "avg_pool2d-divisor": (lambda L, a: _f(L).avg_pool2d(
        a, (2, 3), stride=(2, 1), padding=(1, 0), divisor_override=4), [X2], (0,)),
    "avg_pool1d": (lambda L, a: _f(L).avg_pool1d(a, 3, stride=2, padding=1).exp(), [X1], (0,)),
    "avg_pool3d": (lambda L, a: _f(L).avg_pool3d(a, 2, stride=1) ** 2, [X3D], (0,)),
    "max_pool2d": (lambda L, a: _f(L).max_pool2d(a, 2) ** 2, [X2], (0,)),
    "max_pool2d-options": (lambda L, a: _f(L).max_pool2d(
        a, 3, stride=2, padding=1, dilation=1, ceil_mode=True).exp(), [X2], (0,)),
    "max_pool2d-dilation": (lambda L, a: _f(L).max_pool2d(
        a, 2, stride=1, dilation=2) ** 2, [X2], (0,)),
    "max_pool1d": (lambda L, a: _f(L).max_pool1d(a, 3, stride=2, padding=1) ** 2, [X1], (0,)),
    "max_pool3d": (lambda L, a: _f(L).max_pool3d(a, 2, stride=(1, 2, 1)) ** 2, [X3D], (0,)),
}


def _first_order(name, arrays, u):
    """The gradients by the first-order pass (arrays), with ``u`` as the output's gradient."""
    return first_order(CASES[name], arrays, u)


@pytest.mark.parametrize("name", list(CASES))
def test_gradgradcheck(name):
    """d/dz <g(x, u), v> for z = each input and the upstream gradient u, where g is recorded
    (create_graph=True), against central differences of the first-order gradient."""
    check_gradgrad(CASES[name], first_rtol=1e-11, first_atol=1e-13)


# dropout: PyTorch draws another mask (checked below with the same mask); embedding-freq:
# PyTorch's double backward leaves scale_grad_by_freq out (pinned below)
NOT_LIKE_TORCH = ("dropout", "embedding-freq")


def _second_derivatives(lib, name):
    """The recorded first derivatives and the gradients of ``sum(probe * first)`` in every input
    that requires grad and in the upstream gradient: the double backward, in ``lib``."""
    op, arrays, wrt = CASES[name]
    ins = [lib.tensor(a, requires_grad=k in wrt) for k, a in enumerate(arrays)]
    xs = [ins[k] for k in wrt]
    out = op(lib, *ins)
    u = lib.tensor(_upstream(tuple(out.shape)), requires_grad=True)
    grads = lib.autograd.grad(out, xs, grad_outputs=u, create_graph=True)
    total = sum((g * lib.tensor(_probe(tuple(g.shape)))).sum() for g in grads)
    seconds = lib.autograd.grad(total, [*xs, u], allow_unused=True)
    return [g.detach().numpy() for g in grads] + [
        np.zeros(x.shape) if s is None else s.numpy()
        for s, x in zip(seconds, [*xs, u], strict=True)
    ]


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel:UserWarning")
@pytest.mark.parametrize("name", [name for name in CASES if name not in NOT_LIKE_TORCH])
def test_double_backward_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = _second_derivatives(tl, name), _second_derivatives(torch, name)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parity
def test_dropout_double_backward_matches_pytorch_with_the_same_mask():
    torch = pytest.importorskip("torch")
    x = tl.tensor(XP, requires_grad=True)
    out = tl.nn.functional.dropout(x, 0.4, generator=tl.Generator().manual_seed(3))
    mask = out.detach().numpy() / XP  # 0 or 1/(1 - p)
    results = []
    ops = ((tl, lambda a: _dropout(tl, a)), (torch, lambda a: (a * torch.tensor(mask)) ** 2))
    for lib, f in ops:
        a = lib.tensor(XP, requires_grad=True)
        u = lib.tensor(_upstream(XP.shape), requires_grad=True)
        (g,) = lib.autograd.grad(f(a), a, grad_outputs=u, create_graph=True)
        second = lib.autograd.grad((g * lib.tensor(_probe(XP.shape))).sum(), [a, u])
        results.append([g.detach().numpy(), *(s.numpy() for s in second)])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parity
def test_pytorch_leaves_scale_grad_by_freq_out_of_its_double_backward():
    """W̄ = S Ȳ with S adding row p into row id_p scaled by 1/count(id_p): its derivative in Ȳ
    is Sᵀ, a lookup scaled by 1/count (tensorlib, and central differences); PyTorch's
    ``embedding_dense_double_backward`` is the lookup unscaled."""
    torch = pytest.importorskip("torch")
    ids = np.array([1, 1, 1, 2])
    counts = np.array([3.0, 3.0, 3.0, 1.0])[:, None]
    results = []
    for lib in (tl, torch):
        w = lib.tensor(TABLE[:4], requires_grad=True)
        u = lib.tensor(np.ones((4, 3)), requires_grad=True)
        y = lib.nn.functional.embedding(lib.tensor(ids), w, scale_grad_by_freq=True)
        (g,) = lib.autograd.grad(y, w, grad_outputs=u, create_graph=True)
        (gu,) = lib.autograd.grad((g * lib.tensor(_probe((4, 3)))).sum(), u)
        results.append((g.detach().numpy(), gu.numpy()))
    (ours_g, ours_u), (theirs_g, theirs_u) = results
    np.testing.assert_allclose(ours_g, theirs_g, rtol=1e-14)
    np.testing.assert_allclose(ours_u, _probe((4, 3))[ids] / counts, rtol=1e-14)
    np.testing.assert_allclose(theirs_u, _probe((4, 3))[ids], rtol=1e-14)


REAL = RNG.standard_normal((3, 1, 6, 6))
FAKE = RNG.standard_normal((3, 1, 6, 6))
MIX = RNG.random((3, 1, 1, 1))
CRITIC = [RNG.standard_normal((4, 1, 3, 3)) * 0.5, 0.1 * RNG.standard_normal(4),
          1 + 0.2 * RNG.standard_normal((4, 3, 3)), 0.1 * RNG.standard_normal((4, 3, 3)),
          RNG.standard_normal((1, 36)) * 0.3, 0.1 * RNG.standard_normal(1)]


def _critic_loss(lib, params, dtype=np.float64):
    """A WGAN-GP critic loss: D(fake) - D(real) + 10 (|∇D(x̂)| - 1)², D = conv (stride 2) ->
    layer_norm -> leaky_relu -> linear, x̂ between real and fake samples."""
    F = lib.nn.functional
    w1, b1, gamma, beta, w2, b2 = params

    def critic(x):
        h = F.conv2d(x, w1, b1, stride=2, padding=1)
        h = F.leaky_relu(F.layer_norm(h, (4, 3, 3), gamma, beta), 0.2)
        return F.linear(h.reshape(h.shape[0], -1), w2, b2)

    real, fake, mix = (lib.tensor(a.astype(dtype)) for a in (REAL, FAKE, MIX))
    between = (mix * real + (1 - mix) * fake).requires_grad_(True)
    (slope,) = lib.autograd.grad(critic(between).sum(), between, create_graph=True)
    norms = (slope * slope).reshape(slope.shape[0], -1).sum(1).sqrt()
    penalty = ((norms - 1) ** 2).mean()
    return critic(fake).mean() - critic(real).mean() + 10 * penalty


def _critic_gradients(lib):
    params = [lib.tensor(p, requires_grad=True) for p in CRITIC]
    loss = _critic_loss(lib, params)
    loss.backward()
    return loss.item(), [p.grad.numpy() for p in params]


@pytest.mark.parity
def test_a_wgan_gp_penalty_on_a_conv_critic_matches_pytorch():
    torch = pytest.importorskip("torch")
    loss, grads = _critic_gradients(tl)
    t_loss, t_grads = _critic_gradients(torch)
    assert loss == pytest.approx(t_loss, rel=1e-12)
    for ours, theirs in zip(grads, t_grads, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_a_wgan_gp_penalty_on_a_conv_critic_matches_central_differences():
    _, grads = _critic_gradients(tl)

    def loss_at(params):
        return _critic_loss(tl, [tl.tensor(p, requires_grad=True) for p in params]).item()

    for k, got in enumerate(grads):
        def at(point, k=k):
            moved = [p.copy() for p in CRITIC]
            moved[k] = point
            return loss_at(moved)

        np.testing.assert_allclose(got, _central(at, CRITIC[k]), rtol=1e-6, atol=1e-7)


NEW_OPS = [layers.LayerNormFunction, layers._RMSNorm, layers.BatchNormFunction, layers._ConvNd,
           layers._ConvTransposeNd, layers._Embedding, layers._Dropout, layers._Pad,
           layers._AvgPoolNd, layers._MaxPoolNd, layers._Unfold, layers._Fold]


def test_the_new_ops_are_listed_as_differentiable():
    listed = tl.engine.higher_order.differentiable_ops()
    for op in NEW_OPS:
        assert op.__name__.lstrip("_") in listed


@pytest.mark.parametrize("name", ["layer_norm-affine", "rms_norm-weight", "batch_norm-train",
                                  "batch_norm-eval", "conv2d-groups", "conv1d", "conv3d",
                                  "conv_transpose2d-groups", "conv_transpose3d",
                                  "embedding-freq", "dropout", "pad-crop",
                                  "avg_pool2d-options", "max_pool2d-options", "conv-of-conv",
                                  "unfold", "fold"])
def test_the_first_order_pass_never_calls_backward_graph(name, monkeypatch):
    op, arrays, wrt = CASES[name]
    ins = [tl.tensor(a, requires_grad=k in wrt) for k, a in enumerate(arrays)]
    out = op(tl, *ins)
    u = _upstream(tuple(out.shape))
    out.backward(tl.tensor(u), retain_graph=True)
    first = [ins[k].grad.numpy().copy() for k in wrt]

    def refuse(self, grad):
        raise AssertionError(f"{type(self).__name__}.backward_graph ran in a first-order pass")

    for cls in NEW_OPS:
        monkeypatch.setattr(cls, "backward_graph", refuse)
    assert all(ins[k].grad.grad_fn is None for k in wrt)
    with pytest.raises(AssertionError, match="backward_graph ran"):
        tl.autograd.grad(out, [ins[k] for k in wrt], grad_outputs=tl.tensor(u), create_graph=True)
    for k in wrt:
        ins[k].grad = None
    out.backward(tl.tensor(u))  # the same bits again, with every backward_graph refusing
    for k, expected in zip(wrt, first, strict=True):
        assert np.array_equal(ins[k].grad.numpy(), expected)


ONE_NODE = {  # one op applied to leaves: the output's node is the op's
    "layer_norm": (lambda F, a, w, b: F.layer_norm(a, (2, 4), w, b), [XN, GAMMA, BETA]),
    "rms_norm": (lambda F, a, w: F.rms_norm(a, 4, w), [XN, GAMMA4]),
    "batch_norm": (lambda F, a, w, b: F.batch_norm(a, None, None, w, b, training=True),
                   [XB, WB, BB]),
    "conv2d": (lambda F, a, w, b: F.conv2d(a, w, b, stride=2, padding=1, groups=2),
               [X2, W2G, B6]),
    "conv_transpose2d": (lambda F, a, w: F.conv_transpose2d(a, w, stride=2, output_padding=1),
                         [XT, WT2]),
    "embedding": (lambda F, w: F.embedding(tl.tensor(IDS), w, scale_grad_by_freq=True), [TABLE]),
    "pad": (lambda F, a: F.pad(a, (1, -1, 2, 0)), [XP]),
    "avg_pool2d": (lambda F, a: F.avg_pool2d(a, 3, 2, 1, ceil_mode=True), [X2]),
    "max_pool2d": (lambda F, a: F.max_pool2d(a, 3, 2, 1), [X2]),
}


@pytest.mark.parametrize("name", list(ONE_NODE))
def test_the_array_backward_is_the_first_order_pass(name):
    """A plain backward gives, bit for bit, the node's array ``backward``; a create_graph pass
    through the same graph gives the same values (to rounding) and leaves the next plain pass's
    bits as they were."""
    op, arrays = ONE_NODE[name]
    ins = [tl.tensor(a, requires_grad=True) for a in arrays]
    out = op(tl.nn.functional, *ins)
    u = _upstream(tuple(out.shape))
    direct = [g for g in out.grad_fn.backward(u.copy()) if g is not None]
    grads = tl.autograd.grad(out, ins, grad_outputs=tl.tensor(u), retain_graph=True)
    for g, d in zip(grads, direct, strict=True):
        assert np.array_equal(g.numpy(), d)
    recorded = tl.autograd.grad(out, ins, grad_outputs=tl.tensor(u), create_graph=True)
    for g, d in zip(recorded, direct, strict=True):
        np.testing.assert_allclose(g.detach().numpy(), d, rtol=1e-12, atol=1e-14)
    again = tl.autograd.grad(out, ins, grad_outputs=tl.tensor(u))
    for g, d in zip(again, direct, strict=True):
        assert np.array_equal(g.numpy(), d)


def test_float32_stays_float32():
    results = {}
    for dtype in (np.float32, np.float64):
        params = [tl.tensor(p.astype(dtype), requires_grad=True) for p in CRITIC]
        loss = _critic_loss(tl, params, dtype)
        loss.backward()
        results[dtype] = [p.grad for p in params]
    assert all(g.dtype == tl.float32 for g in results[np.float32])
    for a, b in zip(results[np.float32], results[np.float64], strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3, atol=1e-4)


def test_an_input_changed_in_place_is_refused_where_the_recorded_backward_reads_it():
    x = tl.tensor(XN, requires_grad=True)
    h = x * 1.0
    out = tl.nn.functional.layer_norm(h, 4)
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*LayerNorm"):
        tl.autograd.grad(out.sum(), x, create_graph=True)
