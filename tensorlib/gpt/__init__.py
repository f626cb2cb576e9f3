"""tensorlib.gpt: a small GPT decoder (chapter 5, "Attention") and its trainer (chapter 8).

Written by hand, re-exports only: the model lives in tensorlib.gpt.model, generated from
book/05_attention.ipynb; data, training, micro-batches on all threads, the allocator helper and
the command line (``python -m tensorlib.gpt``) in tensorlib.gpt.data, .train, .data_parallel,
.perf, .worker_processes and .cli, generated from book/08_gpt.ipynb.
"""

# Chapter 5, Attention: the decoder, its config, its KV cache and the one-token Decoder
# (tensorlib.gpt.model)
from tensorlib.gpt.model import (
    GPT,
    MLP,
    Block,
    CausalSelfAttention,
    Decoder,
    GPTConfig,
    KVCache,
    LayerKVCache,
    PostNormBlock,
    decodes_fast,
)

# Chapter 8, A GPT end to end: data, trainer, sampling, micro-batches on all threads or in worker
# processes, allocator tuning (tensorlib.gpt.data, .train, .data_parallel, .worker_processes, .perf)
from tensorlib.gpt.data import BatchSampler, CharTokenizer, load_corpus, train_val_split
from tensorlib.gpt.data_parallel import micro_batch_backward
from tensorlib.gpt.perf import tune_malloc
from tensorlib.gpt.train import TrainConfig, Trainer, model_from_checkpoint, read_checkpoint, sample
from tensorlib.gpt.worker_processes import MicroBatchProcesses

__all__ = [
    "Block",
    "CausalSelfAttention",
    "Decoder",
    "GPT",
    "GPTConfig",
    "KVCache",
    "LayerKVCache",
    "MLP",
    "MicroBatchProcesses",
    "PostNormBlock",
    "decodes_fast",
    # chapter 8
    "BatchSampler",
    "CharTokenizer",
    "TrainConfig",
    "Trainer",
    "load_corpus",
    "micro_batch_backward",
    "model_from_checkpoint",
    "read_checkpoint",
    "sample",
    "train_val_split",
    "tune_malloc",
]
