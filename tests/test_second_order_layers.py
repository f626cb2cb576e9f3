"""Chapter 4, section "Second-order gradients through the layers": the recorded backward
(``backward_graph``, run by ``create_graph=True``) of layer_norm, rms_norm, batch_norm, the
convolutions and transposed convolutions (1-D, 2-D, 3-D; stride, padding, dilation, groups,
output_padding), unfold and fold, embedding, dropout, constant pad, average and max pooling,
adaptive max pooling and power-average pooling, embedding_bag (sum, mean, max, per-sample weights,
padding_idx), binary_cross_entropy, max unpooling, grid_sample and ctc_loss.

Gradgradchecks in float64 (the recorded first derivative differentiated again, in the inputs and
in the upstream gradient, against central differences of the first-order gradient), parity with
PyTorch 2.13's double backward (every case but dropout, whose mask PyTorch draws differently; for
embedding_bag, whose double backward PyTorch does not implement, against PyTorch's of the same
sums written with embedding; and ctc_loss, which PyTorch refuses), ties of the max poolings and
of embedding_bag's max, a WGAN-GP penalty on a convolutional critic, and the first-order pass
unchanged (it never calls ``backward_graph``, and gives the same bits)."""

from __future__ import annotations

import numpy as np
import pytest
from _gradgrad import central as _central
from _gradgrad import check_gradgrad, first_order
from _gradgrad import probe as _probe
from _gradgrad import upstream as _upstream

import tensorlib as tl
from tensorlib.nn.functional import elementwise_loss, layers, structured_loss

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
POSITIVE = np.abs(RNG.standard_normal((2, 3, 7))) + 0.1
BAG_IDS = np.array([1, 4, 1, 0, 5, 2, 3, 4])
BAG_OFFSETS = np.array([0, 2, 2, 5])  # bags of 2, 0, 3 and 3 ids
BAG_WEIGHTS = 0.5 + RNG.random(8)
PROBS, TARGETS = 0.1 + 0.8 * RNG.random((3, 4)), RNG.random((3, 4))
BCE_WEIGHT = 0.5 + RNG.random(4)
UNPOOL = RNG.standard_normal((2, 4, 2, 2))
UNPOOL_IDS = np.array([0, 3, 16, 23, 7, 8, 21, 18])  # a 5x5 plane; 2x2 windows, stride 2
UNPOOL_IDS = np.broadcast_to(np.resize(UNPOOL_IDS, (4, 4)), (2, 4, 4)).reshape(2, 4, 2, 2)
GRID_X = RNG.standard_normal((2, 2, 4, 5))
GRID = RNG.uniform(-1.2, 1.2, (2, 3, 2, 2))
LOGITS = RNG.standard_normal((6, 3, 5))  # (T, N, C)
CTC_TARGETS = np.array([[1, 2, 2], [3, 1, 0], [4, 0, 0]])


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
    # 5 -> 3 and 5 -> 4: windows that overlap, so a pixel can win twice
    "adaptive_max_pool2d": (lambda L, a: _f(L).adaptive_max_pool2d(a, (3, 4)) ** 2, [X2], (0,)),
    "adaptive_max_pool1d": (lambda L, a: _f(L).adaptive_max_pool1d(a, 4).exp(), [X1], (0,)),
    "adaptive_max_pool3d": (lambda L, a: _f(L).adaptive_max_pool3d(a, (3, None, 2)) ** 2, [X3D],
                            (0,)),
    "lp_pool2d": (lambda L, a: _f(L).lp_pool2d(a, 2, 2, 1) ** 2, [X2], (0,)),
    "lp_pool1d": (lambda L, a: _f(L).lp_pool1d(a, 3, 3, 2, ceil_mode=True), [POSITIVE], (0,)),
    "embedding_bag-sum": (lambda L, w: _bag(L, w, "sum") ** 2, [TABLE], (0,)),
    "embedding_bag-mean": (lambda L, w: _bag(L, w, "mean", padding_idx=1) ** 2, [TABLE], (0,)),
    "embedding_bag-max": (lambda L, w: _bag(L, w, "max").exp(), [TABLE], (0,)),
    "embedding_bag-2d": (lambda L, w: _bag(L, w, "mean", two_d=True).sin(), [TABLE], (0,)),
    "embedding_bag-weights": (lambda L, w, p: _bag(L, w, "sum", p, padding_idx=4) ** 2,
                              [TABLE, BAG_WEIGHTS], (0, 1)),
    "embedding_bag-weights-only": (lambda L, w, p: _bag(L, w, "sum", p) ** 3,
                                   [TABLE, BAG_WEIGHTS], (1,)),
    "binary_cross_entropy": (lambda L, p, t: _f(L).binary_cross_entropy(
        p, t, reduction="none") ** 2, [PROBS, TARGETS], (0, 1)),
    "binary_cross_entropy-weight": (lambda L, p, t: _f(L).binary_cross_entropy(
        p, t, weight=L.tensor(BCE_WEIGHT)), [PROBS, TARGETS], (0, 1)),
    "binary_cross_entropy-input": (lambda L, p, t: _f(L).binary_cross_entropy(
        p, t, reduction="sum").exp(), [PROBS, TARGETS], (0,)),
    "max_unpool2d": (lambda L, v: _f(L).max_unpool2d(
        v, L.tensor(UNPOOL_IDS), 2, output_size=(5, 5)) ** 2, [UNPOOL], (0,)),
    "max_unpool1d": (lambda L, v: _f(L).max_unpool1d(
        v, L.tensor(np.tile([[0, 3], [1, 2]], (2, 2, 1))), 2).exp(), [UNPOOL[..., 0]], (0,)),
    **{
        f"grid_sample-{mode}-{padding}-{corners}": (
            lambda L, a, g, m=mode, p=padding, c=corners: _f(L).grid_sample(
                a, g, mode=m, padding_mode=p, align_corners=c) ** 2,
            [GRID_X, GRID], (0, 1))
        for mode in ("bilinear", "nearest") for padding in ("zeros", "border", "reflection")
        for corners in (False, True)
    },
    "grid_sample-grid-only": (lambda L, a, g: _f(L).grid_sample(
        a, g, padding_mode="reflection", align_corners=False).exp(), [GRID_X, GRID], (1,)),
    "ctc_loss": (lambda L, a: _f(L).ctc_loss(
        a.log_softmax(2), L.tensor(CTC_TARGETS), [6, 5, 4], [3, 2, 1], reduction="none") ** 2,
        [LOGITS], (0,)),
    "ctc_loss-unnormalised": (lambda L, a: _f(L).ctc_loss(
        a, L.tensor(CTC_TARGETS), [6, 6, 3], [3, 2, 1]), [LOGITS], (0,)),
    # sample 0 cannot be aligned (3 labels, 2 steps): zero_infinity gives it a 0 loss
    "ctc_loss-blank-zero_infinity": (lambda L, a: _f(L).ctc_loss(
        a.log_softmax(2), L.tensor(np.array([[1, 1, 1], [2, 3, 0], [0, 0, 0]])), [2, 6, 5],
        [3, 2, 1], blank=4, zero_infinity=True, reduction="sum"), [LOGITS], (0,)),
    "ctc_loss-unbatched": (lambda L, a: _f(L).ctc_loss(
        a[:, 0].log_softmax(1), L.tensor(CTC_TARGETS[0]), [6], [3]).exp(), [LOGITS], (0,)),
}


def _bag(lib, weight, mode, per_sample_weights=None, padding_idx=None, two_d=False):
    """embedding_bag of BAG_IDS cut by BAG_OFFSETS (or 2 bags of 4); in PyTorch, whose
    embedding_bag has no double backward, the same sums written with embedding."""
    ids, offsets = (BAG_IDS.reshape(2, 4), None) if two_d else (BAG_IDS, BAG_OFFSETS)
    if lib is tl:
        return _f(lib).embedding_bag(
            lib.tensor(ids), weight, None if offsets is None else lib.tensor(offsets),
            mode=mode, per_sample_weights=per_sample_weights, padding_idx=padding_idx)
    bounds = np.append(BAG_OFFSETS, len(BAG_IDS)) if not two_d else np.array([0, 4, 8])
    rows = _f(lib).embedding(lib.tensor(BAG_IDS), weight)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    bags = []
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        kept = [k for k in range(start, end) if BAG_IDS[k] != padding_idx]
        if not kept:
            bags.append(lib.zeros(weight.shape[1], dtype=weight.dtype))
            continue
        picked = rows[lib.tensor(kept)]
        reduce = {"sum": lambda r: r.sum(0), "mean": lambda r: r.mean(0),
                  "max": lambda r: r.max(0).values}[mode]
        bags.append(reduce(picked))
    return lib.stack(bags)


def _first_order(name, arrays, u):
    """The gradients by the first-order pass (arrays), with ``u`` as the output's gradient."""
    return first_order(CASES[name], arrays, u)


@pytest.mark.parametrize("name", list(CASES))
def test_gradgradcheck(name):
    """d/dz <g(x, u), v> for z = each input and the upstream gradient u, where g is recorded
    (create_graph=True), against central differences of the first-order gradient."""
    check_gradgrad(CASES[name], first_rtol=1e-11, first_atol=1e-13)


# dropout: PyTorch draws another mask (checked below with the same mask); embedding-freq:
# PyTorch's double backward leaves scale_grad_by_freq out (pinned below);
# ctc_loss: PyTorch has no double backward of it (pinned below)
NOT_LIKE_TORCH = ("dropout", "embedding-freq", "ctc_loss", "ctc_loss-unnormalised",
                  "ctc_loss-blank-zero_infinity", "ctc_loss-unbatched")


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
    # PyTorch's double backward of binary_cross_entropy divides by (x + 1e-12)² (1 - x + 1e-12)²
    # where the derivative has x² (1 - x)²: about 1e-11 relative, more where terms cancel
    atol = 1e-9 if name.startswith("binary_cross_entropy") else 1e-12
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=atol)


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


NEW_OPS = [layers.LayerNormFunction, layers._RMSNorm, layers.BatchNormFunction,
           layers._ConvNdFunction, layers._ConvTransposeNdFunction, layers._Embedding,
           layers._Dropout, layers._Pad,
           layers._AvgPoolNdFunction, layers._MaxPoolNdFunction, layers._Unfold, layers._Fold,
           layers._AdaptiveMaxPoolNd, layers._EmbeddingBag, layers._MaxUnpool, layers._GridSample,
           elementwise_loss._BinaryCrossEntropy, structured_loss._CTCLoss]


def test_the_new_ops_are_listed_as_differentiable():
    listed = tl.engine.higher_order.differentiable_ops()
    for op in NEW_OPS:
        assert op.__name__.lstrip("_") in listed


@pytest.mark.parametrize("name", ["layer_norm-affine", "rms_norm-weight", "batch_norm-train",
                                  "batch_norm-eval", "conv2d-groups", "conv1d", "conv3d",
                                  "conv_transpose2d-groups", "conv_transpose3d",
                                  "embedding-freq", "dropout", "pad-crop",
                                  "avg_pool2d-options", "max_pool2d-options", "conv-of-conv",
                                  "unfold", "fold", "adaptive_max_pool2d", "lp_pool2d",
                                  "embedding_bag-weights", "embedding_bag-max",
                                  "binary_cross_entropy-weight", "max_unpool2d",
                                  "grid_sample-bilinear-reflection-False", "ctc_loss"])
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
    "adaptive_max_pool2d": (lambda F, a: F.adaptive_max_pool2d(a, (3, 4)), [X2]),
    "embedding_bag": (lambda F, w, p: F.embedding_bag(
        tl.tensor(BAG_IDS), w, tl.tensor(BAG_OFFSETS), mode="sum", per_sample_weights=p),
        [TABLE, BAG_WEIGHTS]),
    "embedding_bag-mean": (lambda F, w: F.embedding_bag(
        tl.tensor(BAG_IDS), w, tl.tensor(BAG_OFFSETS), padding_idx=1), [TABLE]),
    "binary_cross_entropy": (lambda F, p, t: F.binary_cross_entropy(
        p, t, weight=tl.tensor(BCE_WEIGHT), reduction="none"), [PROBS, TARGETS]),
    "max_unpool2d": (lambda F, v: F.max_unpool2d(v, tl.tensor(UNPOOL_IDS), 2, output_size=(5, 5)),
                     [UNPOOL]),
    "grid_sample": (lambda F, a, g: F.grid_sample(a, g, padding_mode="border"), [GRID_X, GRID]),
    "ctc_loss": (lambda F, a: F.ctc_loss(a, tl.tensor(CTC_TARGETS), [6, 5, 4], [3, 2, 1],
                                         reduction="none"), [LOGITS]),
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


@pytest.mark.parity
def test_pytorch_has_no_double_backward_for_embedding_bag():
    """Why the embedding_bag cases compare with PyTorch's embedding + sums: PyTorch 2.13 refuses
    to differentiate ``_embedding_bag_backward`` (and the per-sample weights' backward)."""
    torch = pytest.importorskip("torch")
    for kwargs in ({"mode": "mean"}, {"mode": "max"},
                   {"mode": "sum", "per_sample_weights": torch.tensor(BAG_WEIGHTS)}):
        w = torch.tensor(TABLE, requires_grad=True)
        out = torch.nn.functional.embedding_bag(
            torch.tensor(BAG_IDS), w, torch.tensor(BAG_OFFSETS), **kwargs)
        (g,) = torch.autograd.grad((out**2).sum(), w, create_graph=True)
        with pytest.raises((NotImplementedError, RuntimeError), match="not implemented"):
            torch.autograd.grad((g * g).sum(), w)


def _tie_derivatives(lib, pool, x_array):
    """The recorded gradient of ``sum(u * pool(x))`` in x and the gradients of
    ``sum(v * gradient)`` in x and u, for an x with ties."""
    x = lib.tensor(x_array, requires_grad=True)
    out = pool(lib, x)
    u = lib.tensor(_upstream(tuple(out.shape)), requires_grad=True)
    (g,) = lib.autograd.grad(out, x, grad_outputs=u, create_graph=True)
    second = lib.autograd.grad((g * lib.tensor(_probe(x_array.shape))).sum(), [x, u],
                               allow_unused=True)
    return [g.detach().numpy()] + [
        np.zeros(shape) if s is None else s.numpy()
        for s, shape in zip(second, [x_array.shape, tuple(out.shape)], strict=True)
    ]


TIES = np.round(RNG.standard_normal((2, 2, 5, 5)))  # integers: many equal maxima
TIED_POOLS = {
    "max_pool2d": (lambda L, a: _f(L).max_pool2d(a, 3, stride=1, padding=1),
                   lambda a: tl.nn.functional.max_pool2d(a, 3, 1, 1, return_indices=True)[1]),
    "adaptive_max_pool2d": (
        lambda L, a: _f(L).adaptive_max_pool2d(a, (3, 4)),
        lambda a: tl.nn.functional.adaptive_max_pool2d(a, (3, 4), return_indices=True)[1]),
}


@pytest.mark.parametrize("name", list(TIED_POOLS))
def test_ties_in_max_pooling_go_to_the_first_maximum(name):
    """With ties the recorded gradient is the first-order one (each ȳ to its window's first
    maximum), its derivative in u gathers v at those places, and in x it is 0."""
    pool, indices = TIED_POOLS[name]
    g, in_x, in_u = _tie_derivatives(tl, pool, TIES)
    u = _upstream(tuple(pool(tl, tl.tensor(TIES)).shape))
    np.testing.assert_allclose(g, first_order((pool, [TIES], (0,)), [TIES], u)[0], rtol=1e-12,
                               atol=1e-14)
    where = indices(tl.tensor(TIES)).numpy().reshape(2, 2, -1)
    gathered = np.take_along_axis(_probe(TIES.shape).reshape(2, 2, -1), where, -1)
    np.testing.assert_array_equal(in_u, gathered.reshape(in_u.shape))
    np.testing.assert_array_equal(in_x, np.zeros(TIES.shape))


@pytest.mark.parity
@pytest.mark.parametrize("name", list(TIED_POOLS))
def test_ties_in_max_pooling_match_pytorch(name):
    torch = pytest.importorskip("torch")
    pool, _ = TIED_POOLS[name]
    ours, theirs = _tie_derivatives(tl, pool, TIES), _tie_derivatives(torch, pool, TIES)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_ties_in_embedding_bag_max_go_to_the_first_entry():
    """Bag 0 holds id 2 twice and ids 3 and 5, whose rows equal row 2's in a column: every
    (bag, column) maximum is the first entry holding it, in the first-order pass and in the
    recorded one; the derivative in ȳ gathers v there, in the table it is 0."""
    table = np.round(RNG.standard_normal((6, 3)))
    table[3, 0], table[5, 1] = table[2, 0], table[2, 1]
    ids, offsets = np.array([2, 3, 2, 5, 1, 1]), np.array([0, 4])
    w = tl.tensor(table, requires_grad=True)
    out = tl.nn.functional.embedding_bag(tl.tensor(ids), w, tl.tensor(offsets), mode="max")
    u = tl.tensor(_upstream((2, 3)), requires_grad=True)
    (g,) = tl.autograd.grad(out, w, grad_outputs=u, create_graph=True)
    plain = first_order((lambda L, t: L.nn.functional.embedding_bag(
        L.tensor(ids), t, L.tensor(offsets), mode="max"), [table], (0,)), [table], u.numpy())
    np.testing.assert_array_equal(g.detach().numpy(), plain[0])
    v = _probe((6, 3))
    in_w, in_u = tl.autograd.grad((g * tl.tensor(v)).sum(), [w, u], allow_unused=True)
    winners = np.zeros((2, 3), dtype=np.int64)  # the id of each bag's first maximum, by column
    for b, (start, end) in enumerate([(0, 4), (4, 6)]):
        for d in range(3):
            column = table[ids[start:end], d]
            winners[b, d] = ids[start + int(np.flatnonzero(column == column.max())[0])]
    np.testing.assert_array_equal(in_u.numpy(), v[winners, np.arange(3)])
    assert in_w is None or not in_w.numpy().any()
    expected = np.zeros((6, 3))
    np.add.at(expected, (winners, np.arange(3)), u.numpy())
    np.testing.assert_array_equal(plain[0], expected)


def test_a_table_changed_in_place_is_refused_by_the_weighted_bag_recorded_backward():
    w = tl.tensor(TABLE, requires_grad=True)
    p = tl.tensor(BAG_WEIGHTS, requires_grad=True)
    table = w * 1.0
    out = tl.nn.functional.embedding_bag(tl.tensor(BAG_IDS), table, tl.tensor(BAG_OFFSETS),
                                         mode="sum", per_sample_weights=p)
    table.add_(1.0)
    out.sum().backward(retain_graph=True)  # the first-order pass reads the rows it kept
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*EmbeddingBag"):
        tl.autograd.grad(out.sum(), [w, p], create_graph=True)


@pytest.mark.parity
def test_pytorch_has_no_double_backward_for_ctc_loss():
    torch = pytest.importorskip("torch")
    lp = torch.tensor(LOGITS, requires_grad=True)
    loss = torch.nn.functional.ctc_loss(lp.log_softmax(2), torch.tensor(CTC_TARGETS), [6, 5, 4],
                                        [3, 2, 1])
    (g,) = torch.autograd.grad(loss, lp, create_graph=True)
    with pytest.raises(RuntimeError, match="_ctc_loss_backward is not implemented"):
        torch.autograd.grad((g * g).sum(), lp)


def test_ctc_loss_float32_second_derivatives_stay_float32():
    results = {}
    for dtype in (np.float32, np.float64):
        lp = tl.tensor(LOGITS.astype(dtype), requires_grad=True)
        loss = tl.nn.functional.ctc_loss(lp.log_softmax(2), tl.tensor(CTC_TARGETS), [6, 5, 4],
                                         [3, 2, 1])
        (g,) = tl.autograd.grad(loss, lp, create_graph=True)
        (h,) = tl.autograd.grad((g * g).sum(), lp)
        results[dtype] = (g, h)
    assert all(t.dtype == tl.float32 for t in results[np.float32])
    for a, b in zip(results[np.float32], results[np.float64], strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-5)
