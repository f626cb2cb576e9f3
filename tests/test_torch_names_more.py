"""Names PyTorch programs use that a scan of real programs found missing: torch.pi and torch.e,
torch.Size (chapter 1, section 1.1), the legacy typed constructors (chapter 2, section 8),
torch.jit's decorators and set_float32_matmul_precision (chapter 8, section 16)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorlib as tl

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
          "CharTensor", "ByteTensor", "BoolTensor"]


def test_constants():
    assert tl.pi == math.pi and tl.e == math.e


@pytest.mark.parity
def test_size_behaves_as_pytorchs():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        s = lib.Size([2, 3, 4])
        assert s == (2, 3, 4) and s.numel() == 24 and isinstance(s, tuple)
        assert isinstance(s[1:], lib.Size) and s[1:] == (3, 4) and s[0] == 2
        assert isinstance(s + (5,), lib.Size) and lib.Size().numel() == 1
    assert repr(tl.Size([2, 3])) == "Size([2, 3])"
    with pytest.raises(ValueError):
        tl.Size([2, -1])
    with pytest.raises(TypeError):
        tl.Size([2.5])


@pytest.mark.parity
@pytest.mark.parametrize("name", LEGACY)
def test_legacy_constructors_match_pytorch(name):
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        kind = getattr(lib, name)
        from_data, sized = kind([1, 0, 2]), kind(2, 3)
        assert str(from_data.dtype).split(".")[-1] == str(getattr(torch, name)([1]).dtype).split(
            ".")[-1]
        assert from_data.tolist() == torch.tensor([1, 0, 2]).to(
            getattr(torch, name)([1]).dtype).tolist()
        assert tuple(sized.shape) == (2, 3)
        assert isinstance(from_data, kind)
        other = "LongTensor" if name != "LongTensor" else "FloatTensor"
        assert not isinstance(from_data, getattr(lib, other))
    assert np.all(tl.FloatTensor(2, 3).numpy() == 0)  # zeros, where PyTorch leaves memory as is
    assert tl.ones(2).type(tl.DoubleTensor).dtype == tl.float64
    with pytest.raises(TypeError, match="sizes"):
        tl.FloatTensor([1, 2], 3)


def test_jit_stand_ins():
    model = tl.nn.Linear(2, 2)
    assert tl.jit.script(model) is model and tl.jit.trace(model, tl.ones(1, 2)) is model
    assert tl.jit.is_scripting() is False and tl.jit.is_tracing() is False

    @tl.jit.ignore
    def kept(x):
        return x + 1

    @tl.jit.ignore(drop=True)
    def dropped(x):
        return x + 2

    assert kept(1) == 2 and dropped(1) == 3 and tl.jit.unused(kept) is kept
    assert tl.jit.annotate(int, 3) == 3
    with pytest.raises(TypeError, match="module or a function"):
        tl.jit.trace(3)


def test_float32_matmul_precision_is_recorded_and_checked():
    assert tl.get_float32_matmul_precision() == "highest"
    try:
        tl.set_float32_matmul_precision("high")
        assert tl.get_float32_matmul_precision() == "high"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tl.set_float32_matmul_precision("fast")
        assert tl.get_float32_matmul_precision() == "high"
        assert any("no effect" in str(w.message) for w in caught)
    finally:
        tl.set_float32_matmul_precision("highest")


@pytest.mark.parity
def test_structural_initializers_match_pytorch():
    torch = pytest.importorskip("torch")
    for shape, groups in (((4, 2, 3, 3), 2), ((3, 5, 3), 1), ((2, 2, 1, 3, 3), 1)):
        ours = tl.nn.init.dirac_(tl.empty(*shape), groups=groups).numpy()
        theirs = torch.nn.init.dirac_(torch.empty(*shape), groups=groups).numpy()
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(tl.nn.init.eye_(tl.empty(2, 3)).numpy(),
                                  torch.nn.init.eye_(torch.empty(2, 3)).numpy())
    for shape in ((3, 5), (5, 3), (6, 2, 2)):
        w = tl.nn.init.orthogonal_(tl.empty(*shape), gain=1.5, generator=tl.Generator(3)).numpy()
        flat = w.reshape(shape[0], -1)
        gram = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
        np.testing.assert_allclose(gram, 2.25 * np.eye(gram.shape[0]), atol=1e-5)
    with pytest.raises(ValueError, match="2 or more"):
        tl.nn.init.orthogonal_(tl.empty(3))
    with pytest.raises(ValueError, match="divisible"):
        tl.nn.init.dirac_(tl.empty(3, 2, 3), groups=2)


def test_in_place_draws_are_the_generators_own():
    tl.manual_seed(3)
    drawn = tl.empty(1000, dtype=tl.float64).uniform_(-2.0, 3.0)
    tl.manual_seed(3)
    np.testing.assert_array_equal(drawn.numpy(), (tl.rand(1000, dtype=tl.float64) * 5 - 2).numpy())
    g = tl.Generator(5)
    normal = tl.empty(20000).normal_(1.0, 0.5, generator=g).numpy()
    assert abs(normal.mean() - 1.0) < 0.02 and abs(normal.std() - 0.5) < 0.02
    coins = tl.zeros(20000).bernoulli_(0.25, generator=g).numpy()
    assert set(np.unique(coins)) <= {0.0, 1.0} and abs(coins.mean() - 0.25) < 0.02
    assert abs(tl.empty(20000).exponential_(4.0, generator=g).numpy().mean() - 0.25) < 0.01
    per_row = tl.zeros(2, 5000).bernoulli_(tl.tensor([[0.0], [1.0]]), generator=g).numpy()
    assert per_row[0].sum() == 0 and per_row[1].sum() == 5000


def test_in_place_draws_refuse_what_pytorch_refuses():
    leaf = tl.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.uniform_()
    with tl.no_grad():
        leaf.normal_()  # allowed under no_grad, as in PyTorch
    with pytest.raises(RuntimeError, match="std"):
        tl.empty(2).normal_(0.0, -1.0)
    with pytest.raises(TypeError, match="floating"):
        tl.zeros(2, dtype=tl.int64).uniform_()


@pytest.mark.parity
def test_unfold_and_triangles_in_place_match_pytorch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((2, 3, 7))
    for dim, size, step in ((2, 3, 2), (2, 7, 1), (1, 2, 1), (-1, 1, 3)):
        results = []
        for lib in (tl, torch):
            a = lib.tensor(x, requires_grad=True)
            out = a.unfold(dim, size, step)
            weights = np.random.default_rng(1).standard_normal(tuple(out.shape))
            (out * lib.tensor(weights)).sum().backward()
            results.append((out.detach().numpy(), a.grad.numpy()))
        np.testing.assert_allclose(results[0][0], results[1][0])
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
    leaf = tl.tensor(x[0], requires_grad=True)
    assert tl.autograd.gradcheck(lambda a: a.unfold(1, 3, 1), (leaf,))
    with pytest.raises(RuntimeError, match="maximum size"):
        tl.ones(3).unfold(0, 4, 1)
    for lib in (tl, torch):
        m = lib.ones(3, 3)
        assert m.triu_(1) is m and m.tolist() == [[0, 1, 1], [0, 0, 1], [0, 0, 0]]
        assert lib.ones(2, 2).tril_().tolist() == [[1, 0], [1, 1]]
