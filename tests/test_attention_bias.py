"""Chapter 5, section 3.5: PyTorch's causal biases (torch.nn.attention.bias: CausalVariant,
CausalBias, causal_upper_left, causal_lower_right) as scaled_dot_product_attention's attn_mask:
values and gradients against torch 2.13, a float64 gradcheck, and PyTorch's errors and warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck
from tensorlib.nn.functional.attention import (
    CausalBias,
    CausalVariant,
    causal_lower_right,
    causal_upper_left,
)

F = tl.nn.functional
RNG = np.random.default_rng(8)


def test_variants_have_pytorchs_values() -> None:
    assert [(v.name, int(v)) for v in CausalVariant] == [("UPPER_LEFT", 1), ("LOWER_RIGHT", 2)]
    bias = causal_lower_right(2, 4)
    assert (bias.variant, bias.seq_len_q, bias.seq_len_kv) == (CausalVariant.LOWER_RIGHT, 2, 4)
    assert bias._materialize().numpy().tolist() == [[True, True, True, False], [True] * 4]
    assert causal_upper_left(2, 4)._materialize().numpy().tolist() == [
        [True, False, False, False], [True, True, False, False]]


@pytest.mark.parity
@pytest.mark.parametrize("variant", ["causal_upper_left", "causal_lower_right"])
@pytest.mark.parametrize("lengths", [(3, 5), (4, 4), (5, 3)])
def test_sdpa_with_bias_matches_pytorch(variant: str, lengths: tuple[int, int]) -> None:
    torch = pytest.importorskip("torch")
    import torch.nn.attention.bias as torch_bias

    t_q, t_k = lengths
    arrays = [RNG.standard_normal((2, 3, t_q, 4)), RNG.standard_normal((2, 3, t_k, 4)),
              RNG.standard_normal((2, 3, t_k, 2))]
    ours = [tl.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_ours = F.scaled_dot_product_attention(
            *ours, attn_mask=globals()[variant](t_q, t_k))
        out_theirs = torch.nn.functional.scaled_dot_product_attention(
            *theirs, attn_mask=getattr(torch_bias, variant)(t_q, t_k))
    np.testing.assert_allclose(out_ours.numpy(), out_theirs.detach().numpy(), atol=1e-12)
    weight = RNG.standard_normal(tuple(out_theirs.shape))
    (out_ours * tl.tensor(weight)).sum().backward()
    (out_theirs * torch.tensor(weight)).sum().backward()
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-11)


@pytest.mark.parity
def test_repr_matches_pytorch() -> None:
    pytest.importorskip("torch")
    import torch.nn.attention.bias as torch_bias

    for name in ("causal_upper_left", "causal_lower_right"):
        assert repr(globals()[name](2, 3)) == repr(getattr(torch_bias, name)(2, 3))


def test_gradcheck_lower_right() -> None:
    q, k, v = (tl.tensor(RNG.standard_normal((2, n, 3)), requires_grad=True) for n in (2, 4, 4))
    assert gradcheck(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=causal_lower_right(2, 4)),
        (q, k, v),
    )


def test_errors_and_warning() -> None:
    x = tl.randn(3, 4)
    with pytest.raises(ValueError, match="CausalBias should not be used with causal=True"):
        F.scaled_dot_product_attention(x, x, x, attn_mask=causal_upper_left(3, 3), is_causal=True)
    with pytest.raises(AssertionError, match="causal_lower_right only supports 2D tensors"):
        causal_lower_right(1, 2, 3)
    with pytest.raises(AssertionError, match="variant must be a CausalVariant, got int"):
        CausalBias(1, 2, 2)  # type: ignore[arg-type]
    with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs"):
        causal_lower_right(3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        causal_upper_left(3, 2)  # only the lower-right one warns
