"""Chapter 3: torch.distributions.utils's helpers (tensorlib.distributions.utils)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck
from tensorlib.distributions import utils as U


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parity
@pytest.mark.parametrize("is_binary", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_probs_and_logits_match_torch(torch, is_binary, dtype):
    probs = np.array([0.0, 1e-9, 0.25, 0.5, 0.75, 1.0], dtype=dtype)
    ours = U.probs_to_logits(tl.tensor(probs), is_binary=is_binary).numpy()
    theirs = torch.distributions.utils.probs_to_logits(torch.tensor(probs), is_binary=is_binary)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-6)
    logits = np.linspace(-5, 5, 12).astype(dtype).reshape(3, 4)
    ours = U.logits_to_probs(tl.tensor(logits), is_binary=is_binary).numpy()
    theirs = torch.distributions.utils.logits_to_probs(torch.tensor(logits), is_binary=is_binary)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-6)
    ours = U.clamp_probs(tl.tensor(probs)).numpy()
    np.testing.assert_array_equal(ours, torch.distributions.utils.clamp_probs(
        torch.tensor(probs)).numpy())


@pytest.mark.parity
@pytest.mark.parametrize("diag", [-3, -1, 0, 1, 3])
def test_triangle_packing_matches_torch(torch, diag):
    mat = np.random.default_rng(0).standard_normal((2, 4, 4))
    ours = U.tril_matrix_to_vec(tl.tensor(mat), diag).numpy()
    theirs = torch.distributions.utils.tril_matrix_to_vec(torch.tensor(mat), diag).numpy()
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(
        U.vec_to_tril_matrix(tl.tensor(ours), diag).numpy(),
        torch.distributions.utils.vec_to_tril_matrix(torch.tensor(theirs), diag).numpy(),
    )


def test_triangle_packing_is_differentiable_and_checks_sizes():
    vec = tl.tensor(np.random.default_rng(1).random((2, 6)), requires_grad=True)
    assert gradcheck(lambda v: U.vec_to_tril_matrix(v, 0), (vec,))
    mat = tl.tensor(np.random.default_rng(2).random((3, 3)), requires_grad=True)
    assert gradcheck(lambda m: U.tril_matrix_to_vec(m, -1), (mat,))
    with pytest.raises(ValueError, match="cannot be expressed as the lower triangular"):
        U.vec_to_tril_matrix(tl.zeros(5))
    with pytest.raises(ValueError, match=r"diag \(4\) provided is outside \[-4, 3\]"):
        U.tril_matrix_to_vec(tl.zeros(4, 4), 4)


@pytest.mark.parity
def test_broadcast_all_matches_torch(torch):
    ours = U.broadcast_all(tl.zeros(3, 1, dtype=tl.float64), tl.zeros(4), 2)
    theirs = torch.distributions.utils.broadcast_all(
        torch.zeros(3, 1, dtype=torch.float64), torch.zeros(4), 2)
    assert [tuple(t.shape) for t in ours] == [tuple(t.shape) for t in theirs]
    assert [str(t.dtype) for t in ours] == [str(t.dtype).replace("torch.", "") for t in theirs]
    assert str(U.broadcast_all(1.0, 2.0)[0].dtype) == "float32"
    with pytest.raises(ValueError, match="expected tensors or numbers, got str"):
        U.broadcast_all(1.0, "a")


@pytest.mark.parity
def test_euler_constant_and_lazy_property(torch):
    assert U.euler_constant == torch.distributions.utils.euler_constant

    class Model:
        calls = 0

        def __init__(self, w):
            self.w = w

        @U.lazy_property
        def doubled(self):
            Model.calls += 1
            return self.w * 2

    model = Model(tl.ones(2, requires_grad=True))
    with tl.no_grad():
        first = model.doubled  # computed with gradients recorded, as PyTorch does
    assert first.requires_grad and model.doubled is first and Model.calls == 1
    assert isinstance(Model.__dict__["doubled"], U.lazy_property)
