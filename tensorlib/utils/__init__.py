"""tensorlib.utils: PyTorch's ``torch.utils`` names that tensorlib has.

Written by hand, re-exports only. Chapter 4 (Layers): ``tensorlib.utils.data`` (datasets, samplers
and the data loader) and ``tensorlib.utils.hooks`` (``RemovableHandle``, which hook registrations
return). Chapter 8 (A GPT, end to end): ``tensorlib.utils.tensorboard``
(``SummaryWriter``, which refuses, saying why), imported on demand as ``torch.utils.tensorboard``
is, and ``tensorlib.utils.benchmark`` (``Timer``, ``Measurement``, ``Compare``: timing statements
as ``torch.utils.benchmark`` does). Chapter 7 (Checkpointing, section 14):
``tensorlib.utils.checkpoint`` (``checkpoint`` and ``checkpoint_sequential``, activation
checkpointing).
"""

# Chapter 4, Layers: datasets, samplers and the data loader (tensorlib.utils.data)
from tensorlib.utils import data as data

# Chapter 4, Layers (and chapter 2's register_hook): the handle hooks return (tensorlib.utils.hooks)
from tensorlib.utils import hooks as hooks

# Chapter 7, Checkpointing: activation checkpointing (tensorlib.utils.checkpoint)
from tensorlib.utils import checkpoint as checkpoint

# Chapter 8, A GPT end to end: timing statements (tensorlib.utils.benchmark)
from tensorlib.utils import benchmark as benchmark

__all__ = ["benchmark", "checkpoint", "data", "hooks"]
