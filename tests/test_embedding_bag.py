"""Chapter 4, section 5.4: F.embedding_bag and nn.EmbeddingBag against PyTorch (float64 values and
the gradients of the table and of per_sample_weights), gradchecks, errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

F = tl.nn.functional
RNG = np.random.default_rng(5)
TABLE = RNG.standard_normal((7, 4))
LAYOUTS = [
    (np.array([1, 4, 4, 0, 2, 5, 6]), np.array([0, 3, 3, 5]), False),  # an empty bag
    (np.array([1, 4, 4, 0, 2, 5, 6]), np.array([0, 3, 3, 7]), True),  # include_last_offset
    (np.array([[1, 2, 3], [3, 3, 0]]), None, False),  # fixed-length bags
    (np.array([2, 2, 2]), np.array([0, 1]), False),  # repeated ids, padding fills a bag
]


@pytest.mark.parity
@pytest.mark.parametrize("ids, offsets, last", LAYOUTS)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2, -3])
def test_embedding_bag_matches_torch(ids, offsets, last, mode, padding_idx) -> None:
    torch = pytest.importorskip("torch")
    for weighted in [False, True] if mode == "sum" else [False]:
        weights = RNG.standard_normal(ids.shape) if weighted else None
        options = dict(mode=mode, padding_idx=padding_idx, include_last_offset=last)
        table_t = torch.tensor(TABLE, requires_grad=True)
        weights_t = torch.tensor(weights, requires_grad=True) if weighted else None
        theirs = torch.nn.functional.embedding_bag(
            torch.tensor(ids), table_t, None if offsets is None else torch.tensor(offsets),
            per_sample_weights=weights_t, **options)
        upstream = RNG.standard_normal(tuple(theirs.shape))
        (theirs * torch.tensor(upstream)).sum().backward()
        table = tl.tensor(TABLE, requires_grad=True)
        weights_l = tl.tensor(weights, requires_grad=True) if weighted else None
        ours = F.embedding_bag(
            tl.tensor(ids), table, None if offsets is None else tl.tensor(offsets),
            per_sample_weights=weights_l, **options)
        (ours * tl.tensor(upstream)).sum().backward()
        np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(table.grad.numpy(), table_t.grad.numpy(), rtol=1e-12,
                                   atol=1e-12)
        if weighted:
            np.testing.assert_allclose(weights_l.grad.numpy(), weights_t.grad.numpy(),
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parity
def test_module_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    for kwargs in [{}, {"mode": "max", "padding_idx": 2, "include_last_offset": True},
                   {"mode": "sum"}]:
        ours = tl.nn.EmbeddingBag(10, 3, dtype=tl.float64, **kwargs)
        theirs = torch.nn.EmbeddingBag(10, 3, **kwargs).double()
        assert repr(ours) == repr(theirs)
        if "padding_idx" in kwargs:
            assert np.all(ours.weight.numpy()[2] == 0)
        ours.load_state_dict(theirs.state_dict())
        ids, offsets = np.array([1, 2, 9, 0, 2]), np.array([0, 2, 5])
        if not kwargs.get("include_last_offset"):
            offsets = offsets[:-1]
        np.testing.assert_allclose(
            ours(tl.tensor(ids), tl.tensor(offsets)).detach().numpy(),
            theirs(torch.tensor(ids), torch.tensor(offsets)).detach().numpy(), rtol=1e-12)
    initial = tl.tensor(TABLE)
    layer = tl.nn.EmbeddingBag(7, 4, _weight=initial, dtype=tl.float64)
    np.testing.assert_array_equal(layer.weight.detach().numpy(), TABLE)
    first, again = (tl.nn.EmbeddingBag(5, 2, generator=tl.Generator(4)) for _ in range(2))
    np.testing.assert_array_equal(first.weight.detach().numpy(), again.weight.detach().numpy())


def test_gradchecks() -> None:
    ids, offsets = tl.tensor([1, 4, 4, 0, 2, 5]), tl.tensor([0, 3, 3])
    table = tl.tensor(TABLE, requires_grad=True)
    weights = tl.tensor(RNG.standard_normal(6), requires_grad=True)
    assert tl.autograd.gradcheck(
        lambda t, w: F.embedding_bag(ids, t, offsets, mode="sum", per_sample_weights=w),
        (table, weights))
    for mode in ("mean", "max"):
        assert tl.autograd.gradcheck(
            lambda t, mode=mode: F.embedding_bag(ids, t, offsets, mode=mode, padding_idx=4),
            (table,))


def test_errors() -> None:
    table = tl.tensor(TABLE)
    ids = tl.tensor([1, 2, 3])
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor"):
        F.embedding_bag(ids, table)
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(tl.tensor([[1, 2]]), table, tl.tensor([0]))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(ids, table, tl.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="can not be greater than input's length 3"):
        F.embedding_bag(ids, table, tl.tensor([0, 5]))
    with pytest.raises(RuntimeError, match="non-decreasing"):
        F.embedding_bag(ids, table, tl.tensor([0, 2, 1]))
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(ids, table, tl.tensor([0]), per_sample_weights=tl.ones(3, dtype=tl.float64))
    with pytest.raises(ValueError, match="input's shape"):
        F.embedding_bag(ids, table, tl.tensor([0]), mode="sum",
                        per_sample_weights=tl.ones(2, dtype=tl.float64))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(ids, table, tl.tensor([0]), mode="median")
    with pytest.raises(IndexError, match="out of range"):
        F.embedding_bag(tl.tensor([1, 9]), table, tl.tensor([0]))
    with pytest.raises(TypeError, match="integer"):
        F.embedding_bag(tl.tensor([1.0]), table, tl.tensor([0]))
    for name, value in (("max_norm", 1.0), ("scale_grad_by_freq", True), ("sparse", True)):
        with pytest.raises(NotImplementedError, match=name):
            F.embedding_bag(ids, table, tl.tensor([0]), **{name: value})
    with pytest.raises(ValueError, match="_weight must have shape"):
        tl.nn.EmbeddingBag(3, 2, _weight=tl.zeros(2, 2))
