"""Chapter 5: PyTorch's Transformer layers built from the chapter's attention
(tensorlib.nn.modules.transformer).

Parity with PyTorch is in test_parity_transformer.py; here: gradchecks, the relation to the
chapter's GPT blocks, masks, dropout and argument checks.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib import nn
from tensorlib.autograd import gradcheck
from tensorlib.gpt import Block, GPTConfig, PostNormBlock


def randn(*shape, seed=0, requires_grad=False):
    return tl.tensor(
        np.random.default_rng(seed).standard_normal(shape), requires_grad=requires_grad
    )


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_gradcheck(norm_first):
    layer = nn.TransformerEncoderLayer(
        4,
        2,
        dim_feedforward=6,
        dropout=0.0,
        activation="gelu",
        norm_first=norm_first,
        dtype=tl.float64,
        generator=tl.Generator(0),
    )
    x = randn(3, 2, 4, seed=1, requires_grad=True)
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=tl.float64)
    assert gradcheck(lambda s, *params: layer(s, src_mask=mask), (x, *layer.parameters()))


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_gradcheck(norm_first):
    layer = nn.TransformerDecoderLayer(
        4,
        2,
        dim_feedforward=6,
        dropout=0.0,
        norm_first=norm_first,
        batch_first=True,
        dtype=tl.float64,
        generator=tl.Generator(0),
    )
    tgt, memory = (
        randn(2, 3, 4, seed=1, requires_grad=True),
        randn(2, 5, 4, seed=2, requires_grad=True),
    )
    assert gradcheck(
        lambda t, m, *params: layer(
            t, m, tgt_mask=nn.Transformer.generate_square_subsequent_mask(3, dtype=tl.float64)
        ),
        (tgt, memory, *layer.parameters()),
    )


@pytest.mark.parametrize("norm_first, kind", [(False, PostNormBlock), (True, Block)])
def test_encoder_layer_is_the_chapters_block(norm_first, kind):
    block = kind(GPTConfig(n_embd=8, n_head=2), generator=tl.Generator(0)).double()
    layer = nn.TransformerEncoderLayer(
        8,
        2,
        dim_feedforward=32,
        dropout=0.0,
        activation=lambda h: F.gelu(h, approximate="tanh"),
        batch_first=True,
        norm_first=norm_first,
        dtype=tl.float64,
    )
    names = {
        "self_attn.in_proj": "attn.c_attn",
        "self_attn.out_proj": "attn.c_proj",
        "linear1": "mlp.c_fc",
        "linear2": "mlp.c_proj",
        "norm1": "ln_1",
        "norm2": "ln_2",
    }
    state = block.state_dict()
    layer.load_state_dict(
        {
            f"{ours}{sep}{what}": state[f"{theirs}.{what}"]
            for ours, theirs in names.items()
            for what in ("weight", "bias")
            for sep in ["_" if ours == "self_attn.in_proj" else "."]
        }
    )
    x = randn(2, 6, 8, seed=3)
    causal = tl.tensor(np.triu(np.ones((6, 6), dtype=bool), 1))  # bool True = not allowed
    np.testing.assert_allclose(
        layer(x, src_mask=causal).numpy(), block(x).numpy(), rtol=1e-12, atol=1e-12
    )


def test_square_subsequent_mask():
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.dtype == np.float32
    np.testing.assert_array_equal(mask.numpy(), [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=tl.float64).dtype == np.float64
    with pytest.raises(ValueError, match="sz must be an int >= 0"):
        nn.Transformer.generate_square_subsequent_mask(-1)


def test_stack_layers_are_independent_copies_sharing_the_generator():
    gen = tl.Generator(0)
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, generator=gen)
    encoder = nn.TransformerEncoder(layer, 2)
    first, second = encoder.layers[0], encoder.layers[1]
    assert first is not layer and first.linear1.weight is not second.linear1.weight
    np.testing.assert_array_equal(first.linear1.weight.numpy(), layer.linear1.weight.numpy())
    assert first.dropout.generator is gen and second.self_attn.generator is gen
    x = tl.randn(3, 2, 4, generator=tl.Generator(1))
    gen.manual_seed(5)
    a = encoder(x)  # training: dropout on, drawn from gen
    gen.manual_seed(5)
    b = encoder(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    encoder.eval()
    c, d = encoder(x), encoder(x)
    np.testing.assert_array_equal(c.numpy(), d.numpy())
    assert not np.allclose(a.numpy(), c.numpy())


def test_unbatched_input_and_key_padding():
    layer = nn.TransformerEncoderLayer(
        4, 2, dim_feedforward=8, dropout=0.0, dtype=tl.float64, generator=tl.Generator(0)
    )
    x = randn(5, 2, 4, seed=1)
    np.testing.assert_allclose(
        layer(x[:, 0]).numpy(), layer(x).numpy()[:, 0], rtol=1e-13, atol=1e-14
    )
    padding = np.zeros((2, 5), dtype=bool)
    padding[0, 3:] = True
    padded = layer(x, src_key_padding_mask=tl.tensor(padding)).numpy()
    short = layer(x[:3, :1]).numpy()  # sequence 0 without its two padded positions
    np.testing.assert_allclose(padded[:3, :1], short, rtol=1e-12, atol=1e-13)


def test_bad_arguments():
    with pytest.raises(ValueError, match="activation must be 'relu', 'gelu' or a callable"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.TransformerEncoderLayer(6, 4)
    with pytest.raises(ValueError, match="num_layers must be an int >= 1"):
        nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2), 0)
    layer = nn.TransformerEncoderLayer(4, 2)
    with pytest.raises(ValueError, match="is_causal=True is only a hint"):
        layer(tl.zeros(3, 1, 4), is_causal=True)
    model = nn.Transformer(
        d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=8
    )
    with pytest.raises(RuntimeError, match="batch number of src and tgt must be equal"):
        model(tl.zeros(3, 2, 4), tl.zeros(3, 1, 4))
    with pytest.raises(RuntimeError, match="must be equal to d_model=4"):
        model(tl.zeros(3, 2, 5), tl.zeros(3, 2, 4))


def test_module_paths_and_names():
    import tensorlib.nn.modules.transformer as transformer

    for name in (
        "TransformerEncoderLayer",
        "TransformerEncoder",
        "TransformerDecoderLayer",
        "TransformerDecoder",
        "Transformer",
    ):
        assert getattr(nn, name) is getattr(transformer, name) is getattr(nn.modules, name)
    assert nn.GRU is nn.modules.rnn.GRU and nn.GRUCell is nn.modules.rnn.GRUCell
