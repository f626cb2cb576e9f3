"""Chapter 5: nn.TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer,
TransformerDecoder and Transformer against PyTorch 2.13, with PyTorch's weights copied in, in eval
mode (dropout off) (issue 22)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn

pytestmark = pytest.mark.parity


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _copy_from_torch(ours, ref):
    assert list(ours.state_dict()) == list(ref.state_dict())
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    ours.eval()
    ref.eval()


def _inputs(torch, rng, *shapes):
    arrays = [rng.standard_normal(shape) for shape in shapes]
    return [tl.tensor(a, requires_grad=True) for a in arrays], [
        torch.tensor(a, requires_grad=True) for a in arrays
    ]


def _compare(torch, ours_out, ref_out, ours_in, ref_in, ours_mod, ref_mod, tol=1e-10):
    np.testing.assert_allclose(ours_out.numpy(), ref_out.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(9).standard_normal(tuple(ours_out.shape))
    (ours_out * tl.tensor(g)).sum().backward()
    (ref_out * torch.tensor(g)).sum().backward()
    for a, b in zip(ours_in, ref_in, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    ref_params = dict(ref_mod.named_parameters())
    for name, p in ours_mod.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), ref_params[name].grad.numpy(), rtol=tol, atol=tol, err_msg=name
        )


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "causal-float", "bool-and-padding"])
def test_encoder_layer_parity(torch, norm_first, activation, batch_first, masks):
    torch.manual_seed(0)
    kwargs = dict(
        dim_feedforward=24,
        dropout=0.1,
        activation=activation,
        batch_first=batch_first,
        norm_first=norm_first,
    )
    ref = torch.nn.TransformerEncoderLayer(8, 2, **kwargs).double()
    ours = nn.TransformerEncoderLayer(8, 2, **kwargs, dtype=tl.float64)
    _copy_from_torch(ours, ref)
    rng = np.random.default_rng(1)
    (x,), (x_t,) = _inputs(torch, rng, (3, 5, 8) if batch_first else (5, 3, 8))
    options, ref_options = {}, {}
    if masks == "causal-float":
        options = {
            "src_mask": nn.Transformer.generate_square_subsequent_mask(5, dtype=tl.float64),
            "is_causal": True,
        }
        mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
        ref_options = {"src_mask": mask, "is_causal": True}
    elif masks == "bool-and-padding":
        blocked = rng.random((5, 5)) < 0.3
        np.fill_diagonal(blocked, False)
        padding = np.zeros((3, 5), dtype=bool)
        padding[1, 3:] = True
        options = {"src_mask": tl.tensor(blocked), "src_key_padding_mask": tl.tensor(padding)}
        ref_options = {
            "src_mask": torch.tensor(blocked),
            "src_key_padding_mask": torch.tensor(padding),
        }
    _compare(torch, ours(x, **options), ref(x_t, **ref_options), [x], [x_t], ours, ref)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_stack_parity(torch, norm_first):
    torch.manual_seed(1)
    layer = torch.nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=16, norm_first=norm_first, batch_first=True
    ).double()
    ref = torch.nn.TransformerEncoder(
        layer, 3, norm=torch.nn.LayerNorm(8).double(), enable_nested_tensor=False
    )
    ours = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(
            8, 2, dim_feedforward=16, norm_first=norm_first, batch_first=True, dtype=tl.float64
        ),
        3,
        norm=nn.LayerNorm(8, dtype=tl.float64),
    )
    with torch.no_grad():  # give every layer and the norm weights of their own
        for p in ref.parameters():
            p.add_(torch.randn(p.shape, dtype=p.dtype) * 0.1)
    _copy_from_torch(ours, ref)
    (x,), (x_t,) = _inputs(torch, np.random.default_rng(2), (2, 6, 8))
    mask = nn.Transformer.generate_square_subsequent_mask(6, dtype=tl.float64)
    ref_mask = torch.nn.Transformer.generate_square_subsequent_mask(6, dtype=torch.float64)
    _compare(
        torch,
        ours(x, mask=mask, is_causal=True),
        ref(x_t, mask=ref_mask, is_causal=True),
        [x],
        [x_t],
        ours,
        ref,
    )


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_and_stack_parity(torch, norm_first, batch_first):
    torch.manual_seed(2)
    kwargs = dict(
        dim_feedforward=16, norm_first=norm_first, batch_first=batch_first, activation="gelu"
    )
    ref_layer = torch.nn.TransformerDecoderLayer(8, 2, **kwargs).double()
    ours_layer = nn.TransformerDecoderLayer(8, 2, **kwargs, dtype=tl.float64)
    _copy_from_torch(ours_layer, ref_layer)
    rng = np.random.default_rng(3)
    shape = (lambda b, t: (b, t, 8)) if batch_first else (lambda b, t: (t, b, 8))
    (tgt, memory), (tgt_t, memory_t) = _inputs(torch, rng, shape(2, 4), shape(2, 6))
    padding = np.zeros((2, 6), dtype=bool)
    padding[0, 4:] = True
    options = dict(
        tgt_mask=nn.Transformer.generate_square_subsequent_mask(4, dtype=tl.float64),
        tgt_is_causal=True,
        memory_key_padding_mask=tl.tensor(padding),
    )
    ref_options = dict(
        tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64),
        tgt_is_causal=True,
        memory_key_padding_mask=torch.tensor(padding),
    )
    _compare(torch, ours_layer(tgt, memory, **options), ref_layer(tgt_t, memory_t, **ref_options),
             [tgt, memory], [tgt_t, memory_t], ours_layer, ref_layer)
    ref = torch.nn.TransformerDecoder(ref_layer, 2)
    ours = nn.TransformerDecoder(ours_layer, 2)
    _copy_from_torch(ours, ref)
    (tgt, memory), (tgt_t, memory_t) = _inputs(torch, rng, shape(2, 4), shape(2, 6))
    _compare(
        torch,
        ours(tgt, memory, **options),
        ref(tgt_t, memory_t, **ref_options),
        [tgt, memory],
        [tgt_t, memory_t],
        ours,
        ref,
    )


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_parity(torch, norm_first):
    torch.manual_seed(3)
    kwargs = dict(
        d_model=8,
        nhead=2,
        num_encoder_layers=2,
        num_decoder_layers=2,
        dim_feedforward=16,
        norm_first=norm_first,
    )
    ref = torch.nn.Transformer(**kwargs).double()
    ours = nn.Transformer(**kwargs, dtype=tl.float64, generator=tl.Generator(0))
    _copy_from_torch(ours, ref)
    (src, tgt), (src_t, tgt_t) = _inputs(torch, np.random.default_rng(4), (7, 2, 8), (5, 2, 8))
    mask = ours.generate_square_subsequent_mask(5, dtype=tl.float64)
    ref_mask = ref.generate_square_subsequent_mask(5, dtype=torch.float64)
    _compare(
        torch,
        ours(src, tgt, tgt_mask=mask, tgt_is_causal=True),
        ref(src_t, tgt_t, tgt_mask=ref_mask, tgt_is_causal=True),
        [src, tgt],
        [src_t, tgt_t],
        ours,
        ref,
    )


def test_defaults_and_initialisation_match_pytorch(torch):
    import inspect

    for name in (
        "TransformerEncoderLayer",
        "TransformerDecoderLayer",
        "TransformerEncoder",
        "TransformerDecoder",
        "Transformer",
    ):
        theirs = inspect.signature(getattr(torch.nn, name)).parameters
        ours = inspect.signature(getattr(nn, name)).parameters
        for arg, parameter in theirs.items():
            assert arg in ours, (name, arg)
            if isinstance(parameter.default, (bool, int, float, str, type(None))):
                assert ours[arg].default == parameter.default, (name, arg)
        for method in ("forward",):
            their_args = list(
                inspect.signature(getattr(getattr(torch.nn, name), method)).parameters
            )
            assert (
                list(inspect.signature(getattr(getattr(nn, name), method)).parameters) == their_args
            ), (name, method)
    small = dict(
        d_model=16, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=64
    )
    ref, ours = torch.nn.Transformer(**small), nn.Transformer(**small, generator=tl.Generator(0))
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in ref.named_parameters()
    ]
    # xavier_uniform_ on every matrix: the same bound, so the same spread
    for (name, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters(), strict=True):
        if p.ndim > 1:
            bound = np.sqrt(6 / sum(p.shape)) * (1 + 1e-6)
            assert np.abs(p.numpy()).max() <= bound and q.abs().max().item() <= bound, name
    np.testing.assert_array_equal(nn.Transformer.generate_square_subsequent_mask(4).numpy(),
                                  torch.nn.Transformer.generate_square_subsequent_mask(4).numpy())
