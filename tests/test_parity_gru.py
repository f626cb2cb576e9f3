"""Chapter 5: nn.GRU and nn.GRUCell against PyTorch 2.13, with PyTorch's weights copied in (issue
22)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn

pytestmark = pytest.mark.parity


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _copy_from_torch(ours, ref, torch):
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})


@pytest.mark.parametrize(
    "num_layers, batch_first, bias, with_h0",
    [
        (1, False, True, True),
        (2, True, True, True),
        (2, False, False, False),
        (3, True, True, False),
    ],
)
@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
def test_gru_parity_outputs_and_gradients(
    torch, num_layers, batch_first, bias, with_h0, dtype, tol
):
    torch.manual_seed(0)
    ref = torch.nn.GRU(3, 4, num_layers=num_layers, batch_first=batch_first, bias=bias).to(
        getattr(torch, np.dtype(dtype).name)
    )
    ours = nn.GRU(3, 4, num_layers=num_layers, batch_first=batch_first, bias=bias, dtype=dtype)
    _copy_from_torch(ours, ref, torch)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 3) if batch_first else (5, 2, 3)).astype(dtype)
    h0 = rng.standard_normal((num_layers, 2, 4)).astype(dtype)
    x_tl, x_t = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    h_tl, h_t = tl.tensor(h0, requires_grad=True), torch.tensor(h0, requires_grad=True)
    out, h_n = ours(x_tl, h_tl if with_h0 else None)
    ref.flatten_parameters()
    ours.flatten_parameters()
    ref_out, ref_h_n = ref(x_t, h_t if with_h0 else None)
    np.testing.assert_allclose(out.numpy(), ref_out.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(h_n.numpy(), ref_h_n.detach().numpy(), rtol=tol, atol=tol)
    g_out, g_h = (
        rng.standard_normal(out.shape).astype(dtype),
        rng.standard_normal(h_n.shape).astype(dtype),
    )
    ((out * tl.tensor(g_out)).sum() + (h_n * tl.tensor(g_h)).sum()).backward()
    ((ref_out * torch.tensor(g_out)).sum() + (ref_h_n * torch.tensor(g_h)).sum()).backward()
    np.testing.assert_allclose(x_tl.grad.numpy(), x_t.grad.numpy(), rtol=tol, atol=tol)
    if with_h0:
        np.testing.assert_allclose(h_tl.grad.numpy(), h_t.grad.numpy(), rtol=tol, atol=tol)
    ref_params = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), ref_params[name].grad.numpy(), rtol=tol, atol=tol, err_msg=name
        )


def test_gru_parity_unbatched_and_state_dict_names(torch):
    ref = torch.nn.GRU(3, 4, num_layers=2).double()
    ours = nn.GRU(3, 4, num_layers=2, dtype=tl.float64)
    assert list(ours.state_dict()) == list(ref.state_dict())
    _copy_from_torch(ours, ref, torch)
    x = np.random.default_rng(2).standard_normal((6, 3))
    out, h = ours(tl.tensor(x))
    ref_out, ref_h = ref(torch.tensor(x))
    np.testing.assert_allclose(out.numpy(), ref_out.detach().numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(h.numpy(), ref_h.detach().numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("bias", [True, False])
def test_gru_cell_parity(torch, bias):
    ref = torch.nn.GRUCell(3, 4, bias=bias).double()
    ours = nn.GRUCell(3, 4, bias=bias, dtype=tl.float64)
    _copy_from_torch(ours, ref, torch)
    rng = np.random.default_rng(3)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    out = ours(tl.tensor(x), tl.tensor(h))
    ref_out = ref(torch.tensor(x), torch.tensor(h))
    np.testing.assert_allclose(out.numpy(), ref_out.detach().numpy(), rtol=1e-12, atol=1e-14)
    out.sum().backward()
    ref_out.sum().backward()
    ref_params = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), ref_params[name].grad.numpy(), rtol=1e-12, atol=1e-14, err_msg=name
        )
    np.testing.assert_allclose(
        ours(tl.tensor(x[0])).numpy(),
        ref(torch.tensor(x[0])).detach().numpy(),
        rtol=1e-12,
        atol=1e-14,
    )


def test_gru_dropout_warning_parity(torch):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.nn.GRU(3, 5, dropout=0.25)
        nn.GRU(3, 5, dropout=0.25)
    assert len(caught) == 2 and str(caught[0].message) == str(caught[1].message)
