"""The modules of chapter 2's section 33.1 losses and distances (chapter 4): each calls its function
with its options, as PyTorch's do; the default dtype reaches layers' parameters."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(4)
A, B = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))

CASES = {
    "L1Loss": (lambda nn: nn.L1Loss(reduction="sum"), lambda L, a, b: (a, b)),
    "KLDivLoss": (lambda nn: nn.KLDivLoss(reduction="batchmean", log_target=True),
                  lambda L, a, b: (a.log_softmax(1), b.log_softmax(1))),
    "PoissonNLLLoss": (lambda nn: nn.PoissonNLLLoss(full=True),
                       lambda L, a, b: (a, (b * b).detach().round())),
    "GaussianNLLLoss": (lambda nn: nn.GaussianNLLLoss(full=True), lambda L, a, b: (a, b, b * b)),
    "MarginRankingLoss": (lambda nn: nn.MarginRankingLoss(0.2),
                          lambda L, a, b: (a[:, 0], b[:, 0], L.tensor([1.0, -1.0, 1.0, -1.0],
                                                                      dtype=L.float64))),
    "HingeEmbeddingLoss": (lambda nn: nn.HingeEmbeddingLoss(0.5),
                           lambda L, a, b: (a[:, 1], L.tensor([1.0, -1.0, 1.0, -1.0],
                                                              dtype=L.float64))),
    "CosineEmbeddingLoss": (lambda nn: nn.CosineEmbeddingLoss(0.1),
                            lambda L, a, b: (a, b, L.tensor([1.0, -1.0, 1.0, -1.0],
                                                            dtype=L.float64))),
    "TripletMarginLoss": (lambda nn: nn.TripletMarginLoss(0.5, p=1.0, swap=True),
                          lambda L, a, b: (a, b, -b)),
    "MultiMarginLoss": (lambda nn: nn.MultiMarginLoss(p=2, weight=tl.tensor([1.0, 2.0, 0.5],
                                                                            dtype=tl.float64)),
                        None),
    "SoftMarginLoss": (lambda nn: nn.SoftMarginLoss(),
                       lambda L, a, b: (a[:, 2], L.tensor([1.0, -1.0, 1.0, -1.0],
                                                          dtype=L.float64))),
    "MultiLabelSoftMarginLoss": (lambda nn: nn.MultiLabelSoftMarginLoss(),
                                 lambda L, a, b: (a, (b > 0).double())),
    "CosineSimilarity": (lambda nn: nn.CosineSimilarity(dim=1), lambda L, a, b: (a, b)),
    "PairwiseDistance": (lambda nn: nn.PairwiseDistance(p=3.0, keepdim=True),
                         lambda L, a, b: (a, b)),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", list(CASES))
def test_modules_match_pytorch(name):
    torch = pytest.importorskip("torch")
    make, inputs = CASES[name]
    results = []
    for lib in (tl, torch):
        a = lib.tensor(A, requires_grad=True)
        b = lib.tensor(B, requires_grad=True)
        if name == "MultiMarginLoss":
            module = lib.nn.MultiMarginLoss(p=2, weight=lib.tensor([1.0, 2.0, 0.5],
                                                                    dtype=lib.float64))
            args = (a, lib.tensor([2, 0, 1, 1]))
        else:
            module, args = make(lib.nn), inputs(lib, a, b)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = module(*args)
        out.sum().backward()
        results.append((out.detach().numpy(), a.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-9, atol=1e-12)


def test_weights_are_buffers_and_layers_follow_the_default_dtype():
    loss = tl.nn.MultiMarginLoss(weight=tl.tensor([1.0, 2.0]))
    assert "weight" in loss.state_dict()
    tl.set_default_dtype(tl.float64)
    try:
        layers = [tl.nn.Linear(2, 2), tl.nn.Conv2d(1, 1, 3), tl.nn.LayerNorm(3),
                  tl.nn.Embedding(3, 2), tl.nn.PReLU()]
        assert all(p.dtype == tl.float64 for layer in layers for p in layer.parameters())
    finally:
        tl.set_default_dtype(tl.float32)
    assert tl.nn.Linear(2, 2).weight.dtype == tl.float32


@pytest.mark.parity
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_matches_pytorch(batch_first, side):
    torch = pytest.importorskip("torch")
    arrays = [RNG.standard_normal((n, 2)) for n in (3, 1, 2)]
    results = []
    for lib in (tl, torch):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.nn.utils.rnn.pad_sequence(leaves, batch_first=batch_first, padding_value=-1.0,
                                            padding_side=side)
        (out * lib.tensor(np.arange(out.numel()).reshape(tuple(out.shape)) * 1.0)).sum().backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in leaves])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs)
    with pytest.raises(RuntimeError, match="trailing shape"):
        tl.nn.utils.rnn.pad_sequence([tl.ones(2, 3), tl.ones(2, 4)])


@pytest.mark.parity
def test_unfold_module_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 5, 5))
    ours = tl.nn.Unfold(2, dilation=1, padding=1, stride=2)(tl.tensor(x)).numpy()
    theirs = torch.nn.Unfold(2, dilation=1, padding=1, stride=2)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs)
    assert repr(tl.nn.Unfold(3)) == repr(torch.nn.Unfold(3))
