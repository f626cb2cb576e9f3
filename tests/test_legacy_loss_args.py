"""Chapter 2, section 33.2: PyTorch's legacy ``size_average``/``reduce`` arguments of the losses of
``tensorlib.nn.functional.loss`` and ``margin_loss``, against PyTorch 2.13: signatures, values and
gradients (float64) and warnings for every combination, positional calls in PyTorch's positions."""

from __future__ import annotations

import inspect
import itertools
import re
import warnings

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib.nn.functional import elementwise_loss, loss

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A, B = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
SIGNS = np.array([1.0, -1.0, 1.0, -1.0])
CLASSES = np.array([2, 0, 1, 1])
COUNTS = RNG.poisson(2.0, size=(4, 3)).astype(np.float64)
WEIGHT = np.array([1.0, 2.0, 0.5])
PROBS = RNG.uniform(size=(4, 3))
CHOICES = (None, True, False)

# name -> (inputs(L, F, a, b), arguments before size_average, arguments between it and reduce)
SPECS = {
    "cross_entropy": (lambda L, F, a, b: [a, L.tensor(CLASSES)], [WEIGHT], [1]),
    "nll_loss": (lambda L, F, a, b: [F.log_softmax(a, 1), L.tensor(CLASSES)], [WEIGHT], [1]),
    "mse_loss": (lambda L, F, a, b: [a, b], [], []),
    "binary_cross_entropy_with_logits": (lambda L, F, a, b: [a, L.tensor(PROBS)], [WEIGHT], []),
    "l1_loss": (lambda L, F, a, b: [a, b], [], []),
    "kl_div": (lambda L, F, a, b: [F.log_softmax(a, 1), F.softmax(b, 1)], [], []),
    "poisson_nll_loss": (lambda L, F, a, b: [a, L.tensor(COUNTS)], [True, True], [1e-6]),
    "margin_ranking_loss": (lambda L, F, a, b: [a[:, 0], b[:, 0], L.tensor(SIGNS)], [0.1], []),
    "hinge_embedding_loss": (lambda L, F, a, b: [a[:, 1], L.tensor(SIGNS)], [0.5], []),
    "soft_margin_loss": (lambda L, F, a, b: [a[:, 2], L.tensor(SIGNS)], [], []),
    "multilabel_soft_margin_loss": (lambda L, F, a, b: [a, (b > 0).double()], [WEIGHT], []),
    "multi_margin_loss": (lambda L, F, a, b: [a, L.tensor(CLASSES)], [2, 0.5, WEIGHT], []),
    "cosine_embedding_loss": (lambda L, F, a, b: [a, b, L.tensor(SIGNS)], [0.1], []),
    "triplet_margin_loss": (lambda L, F, a, b: [a, b, a * 0.3 + b], [1.5, 1.0, 1e-6, True], []),
}


def expected(size_average, reduce):
    """PyTorch's mapping (torch.nn._reduction.legacy_get_string), None counting as True."""
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def message(reduction):
    return (f"size_average and reduce args will be deprecated, please use "
            f"reduction='{reduction}' instead.")


def run(lib, name, call):
    """``call`` on ``lib``'s (tensorlib's or torch's) inputs: the value, the first input's
    gradient and the (category, message) of every warning."""
    L = tl if lib == "tl" else torch
    Fn = F if lib == "tl" else torch.nn.functional
    a, b = L.tensor(A, requires_grad=True), L.tensor(B, requires_grad=True)
    inputs, before, between = SPECS[name]
    before = [L.tensor(v) if isinstance(v, np.ndarray) else v for v in before]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call(getattr(Fn, name), inputs(L, Fn, a, b), before, between)
    out.sum().backward()
    grad = a.grad.numpy() if a.grad is not None else None
    return out.detach().numpy(), grad, [(w.category, str(w.message)) for w in caught]


def assert_same(ours, theirs):
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10, atol=1e-12)
    if theirs[1] is None:
        assert ours[1] is None
    else:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("name", list(SPECS))
def test_signatures_are_pytorchs(name):
    theirs = list(inspect.signature(getattr(torch.nn.functional, name)).parameters)
    ours = list(inspect.signature(getattr(F, name)).parameters)
    unsupported = {"mse_loss": ["weight"], "l1_loss": ["weight"]}.get(name, [])
    assert ours == [p for p in theirs if p not in unsupported]


@pytest.mark.parity
@pytest.mark.parametrize("name", list(SPECS))
@pytest.mark.parametrize(("size_average", "reduce"), list(itertools.product(CHOICES, CHOICES)))
def test_legacy_keywords_match_pytorch(name, size_average, reduce):
    def call(fn, inputs, before, between):
        return fn(*inputs, *before, size_average=size_average, reduce=reduce)

    ours, theirs = run("tl", name, call), run("torch", name, call)
    assert_same(ours, theirs)
    legacy = [text for _, text in ours[2] if text.startswith("size_average")]
    if size_average is None and reduce is None:
        assert legacy == []
    else:
        assert legacy == [message(expected(size_average, reduce))]
        inputs, before, _ = SPECS[name]
        a, b = tl.tensor(A), tl.tensor(B)
        before = [tl.tensor(v) if isinstance(v, np.ndarray) else v for v in before]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plain = getattr(F, name)(*inputs(tl, F, a, b), *before,
                                     reduction=expected(size_average, reduce))
        with pytest.warns(UserWarning, match=re.escape(message(expected(size_average, reduce)))):
            value = getattr(F, name)(*inputs(tl, F, a, b), *before, size_average=size_average,
                                     reduce=reduce, reduction="sum")  # reduction is ignored
        np.testing.assert_allclose(value.numpy(), plain.numpy(), rtol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("name", list(SPECS))
@pytest.mark.parametrize(("size_average", "reduce", "reduction"), [
    (None, None, "sum"), (None, None, "none"), (False, None, "none"), (None, False, "sum"),
    (True, True, "none"), (False, False, "mean"),
])
def test_positional_calls_in_pytorchs_positions(name, size_average, reduce, reduction):
    def call(fn, inputs, before, between):
        return fn(*inputs, *before, size_average, *between, reduce, reduction)

    assert_same(run("tl", name, call), run("torch", name, call))


def test_one_helper_shared_with_chapter_4():
    assert elementwise_loss._legacy_reduction is loss._legacy_reduction
    with pytest.warns(UserWarning, match=re.escape(message("sum"))):
        assert loss._legacy_reduction(False, None, "none") == "sum"


def test_gaussian_nll_loss_has_no_legacy_arguments_as_pytorch():
    with pytest.raises(TypeError):
        F.gaussian_nll_loss(tl.tensor(A), tl.tensor(B), 1.0, size_average=False)  # type: ignore[call-arg]


def test_invalid_reduction_still_raises_without_legacy_arguments():
    with pytest.raises(ValueError, match="reduction"):
        F.mse_loss(tl.tensor(A), tl.tensor(B), reduction="avg")
