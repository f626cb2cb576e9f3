"""tensorlib.gpt: a small GPT decoder (chapter 5, "Attention").

Written by hand, re-exports only: the model lives in tensorlib.gpt.model, generated from
book/05_attention.ipynb.
"""

# Chapter 5, Attention: the decoder, its config and its KV cache (tensorlib.gpt.model)
from tensorlib.gpt.model import (
    GPT,
    MLP,
    Block,
    CausalSelfAttention,
    GPTConfig,
    KVCache,
    LayerKVCache,
    PostNormBlock,
)

__all__ = [
    "Block",
    "CausalSelfAttention",
    "GPT",
    "GPTConfig",
    "KVCache",
    "LayerKVCache",
    "MLP",
    "PostNormBlock",
]
