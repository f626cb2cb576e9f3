"""einsum (chapter 2, section 15): values and gradients of every kind of equation against
PyTorch's, float64 gradchecks, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ii->", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij->", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij", [(3, 4)]),
    ("ijk,k->ij", [(2, 3, 4), (4,)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("i,i,i->", [(5,), (5,), (5,)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...i,i->...", [(2, 3, 4), (4,)]),
    ("...ij->...ji", [(1, 3, 4)]),
    ("b...,b...->b", [(2, 3, 1), (2, 1, 4)]),
    ("Ij,jK->IK", [(3, 4), (4, 5)]),
    (" ij , jk -> ik ", [(3, 4), (4, 5)]),
    (",j->j", [(), (3,)]),  # a 0-d operand: its gradient once wrote into no view
    ("ij,->", [(2, 3), ()]),
]


@pytest.mark.parity
@pytest.mark.parametrize("equation, shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_and_its_gradients_match_pytorch(equation, shapes):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(len(equation))
    arrays = [rng.standard_normal(shape) for shape in shapes]
    results = []
    for lib in (tl, torch):
        operands = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.einsum(equation, *operands)
        weights = np.random.default_rng(1).standard_normal(tuple(out.shape))
        (out * lib.tensor(weights)).sum().backward()
        results.append((out.detach().numpy(), [t.grad.numpy() for t in operands]))
    (ours, our_grads), (theirs, their_grads) = results
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for mine, reference in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("equation, shapes", CASES[:8], ids=[c[0] for c in CASES[:8]])
def test_einsum_gradcheck(equation, shapes):
    rng = np.random.default_rng(3)
    operands = [tl.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    assert tl.autograd.gradcheck(lambda *t: tl.einsum(equation, *t), tuple(operands))


def test_a_list_of_operands_and_a_constant_operand():
    a, b = tl.ones(2, 3, requires_grad=True), tl.ones(3, 4)
    assert tl.einsum("ij,jk->ik", [a, b]).tolist() == [[3.0] * 4] * 2
    tl.einsum("ij,jk->ik", a, b).sum().backward()
    assert a.grad.tolist() == [[4.0] * 3] * 2 and b.grad is None


def test_einsum_errors_name_the_problem():
    with pytest.raises(ValueError, match="has 2 operands, 1 tensors were given"):
        tl.einsum("ij,jk->ik", tl.ones(2, 2))
    with pytest.raises(ValueError, match="does not match operands of shapes"):
        tl.einsum("ij->i", tl.ones(2, 2, 2))
    with pytest.raises(TypeError, match="einsum expects Tensors, got ndarray"):
        tl.einsum("ij->i", np.ones((2, 2)))
