"""F.affine_grid and F.grid_sample (chapter 4, section 10.4): values and gradients against
PyTorch's in float64, float64 gradchecks, errors."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest

import tensorlib as tl

F = tl.nn.functional
RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 3, 4, 5))
GRID = RNG.uniform(-1.3, 1.3, (2, 6, 7, 2))
GRID[0, 0, :5] = [[-1, -1], [1, 1], [0, 0], [-1, 1], [0.5, -0.25]]  # edges and pixel centres


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_matches_torch(mode: str, padding_mode: str, align_corners: bool) -> None:
    torch = pytest.importorskip("torch")
    weights = RNG.standard_normal((2, 3, 6, 7))
    x_t = torch.tensor(X, requires_grad=True)
    grid_t = torch.tensor(GRID, requires_grad=True)
    theirs = torch.nn.functional.grid_sample(x_t, grid_t, mode, padding_mode, align_corners)
    (theirs * torch.tensor(weights)).sum().backward()
    x = tl.tensor(X, requires_grad=True)
    grid = tl.tensor(GRID, requires_grad=True)
    ours = F.grid_sample(x, grid, mode, padding_mode, align_corners)
    (ours * tl.tensor(weights)).sum().backward()
    assert ours.dtype == tl.float64
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), x_t.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grid.grad.numpy(), grid_t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize(
    "size", [(2, 3, 4, 5), (2, 1, 1, 6), (2, 2, 7, 3), (2, 1, 3, 4, 5), (2, 1, 1, 2, 3)]
)
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_torch(size: tuple[int, ...], align_corners: bool) -> None:
    torch = pytest.importorskip("torch")
    dims = len(size) - 2
    theta_np = RNG.standard_normal((2, dims, dims + 1))
    theta_t = torch.tensor(theta_np, requires_grad=True)
    weights = RNG.standard_normal((*size[:1], *size[2:], dims))
    with pytest.warns(UserWarning) if align_corners and min(size[2:]) == 1 else nullcontext():
        theirs = torch.nn.functional.affine_grid(theta_t, size, align_corners)
    (theirs * torch.tensor(weights)).sum().backward()
    theta = tl.tensor(theta_np, requires_grad=True)
    ours = F.affine_grid(theta, size, align_corners)
    (ours * tl.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(theta.grad.numpy(), theta_t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_affine_grid_default_is_align_corners_false() -> None:
    theta = tl.tensor(np.tile(np.eye(2, 3), (1, 1, 1)))
    grid = F.affine_grid(theta, (1, 1, 2, 2)).numpy()
    np.testing.assert_allclose(grid[0, :, :, 0], [[-0.5, 0.5], [-0.5, 0.5]])
    np.testing.assert_allclose(grid[0, :, :, 1], [[-0.5, -0.5], [0.5, 0.5]])


def test_identity_map_reads_the_input_back() -> None:
    theta = tl.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    for align in (False, True):
        grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=align)
        back = F.grid_sample(tl.tensor(X), grid, align_corners=align)
        np.testing.assert_allclose(back.numpy(), X, atol=1e-12)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_gradcheck_spatial_transformer(padding_mode: str) -> None:
    x = tl.tensor(RNG.standard_normal((1, 2, 3, 4)), requires_grad=True)
    theta = tl.tensor(RNG.standard_normal((1, 2, 3)) * 0.6, requires_grad=True)

    def transform(x_: tl.Tensor, theta_: tl.Tensor) -> tl.Tensor:
        return F.grid_sample(x_, F.affine_grid(theta_, (1, 2, 3, 3), False), "bilinear",
                             padding_mode, False)

    assert tl.autograd.gradcheck(transform, (x, theta))


def test_gradcheck_nearest_input() -> None:
    x = tl.tensor(RNG.standard_normal((1, 2, 3, 4)), requires_grad=True)
    grid = tl.tensor(RNG.uniform(-1.2, 1.2, (1, 3, 2, 2)))
    assert tl.autograd.gradcheck(lambda x_: F.grid_sample(x_, grid, "nearest"), (x,))


def test_float32_stays_float32() -> None:
    x, grid = tl.tensor(X.astype(np.float32)), tl.tensor(GRID.astype(np.float32))
    assert F.grid_sample(x, grid).dtype == tl.float32
    theta = tl.tensor(RNG.standard_normal((2, 2, 3)).astype(np.float32))
    assert F.affine_grid(theta, (2, 1, 3, 3)).dtype == tl.float32


def test_errors() -> None:
    x, grid = tl.tensor(X), tl.tensor(GRID)
    with pytest.raises(ValueError, match="expected mode"):
        F.grid_sample(x, grid, mode="cubic")
    with pytest.raises(ValueError, match="expected padding_mode"):
        F.grid_sample(x, grid, padding_mode="wrap")
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.grid_sample(x, grid, mode="bicubic")
    with pytest.raises(NotImplementedError, match="5-D"):
        F.grid_sample(tl.zeros(1, 1, 2, 2, 2), tl.zeros(1, 1, 1, 1, 3))
    with pytest.raises(ValueError, match="grid \\(N, H_out, W_out, 2\\)"):
        F.grid_sample(x, tl.tensor(GRID[..., :1]))
    with pytest.raises(ValueError, match="one batch size"):
        F.grid_sample(x, tl.tensor(GRID[:1]))
    with pytest.raises(TypeError, match="dtype"):
        F.grid_sample(x, tl.tensor(GRID.astype(np.float32)))
    with pytest.raises(TypeError):
        F.grid_sample(tl.zeros(2, 3, 4, 5, dtype=tl.int64), grid)
    with pytest.raises(ValueError, match="floating point"):
        F.affine_grid(tl.zeros(1, 2, 3, dtype=tl.int64), (1, 1, 2, 2))
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(tl.zeros(1, 3, 4), (1, 1, 2, 2))
    with pytest.raises(NotImplementedError, match="4D and 5D"):
        F.affine_grid(tl.zeros(1, 2, 3), (1, 1, 2))
    with pytest.raises(ValueError, match="positive"):
        F.affine_grid(tl.zeros(1, 2, 3), (1, 1, 0, 2))
    with pytest.raises(ValueError, match="batch of 2"):
        F.affine_grid(tl.zeros(1, 2, 3), (2, 1, 2, 2))
