"""tensorlib.utils: PyTorch's ``torch.utils`` names that programs use; so far ``tensorlib.utils.data``.

Written by hand, re-exports only.
"""

# Chapter 4, Layers: datasets, samplers and the data loader (tensorlib.utils.data)
from tensorlib.utils import data as data

__all__ = ["data"]
