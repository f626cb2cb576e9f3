"""tensorlib.utils.data: datasets, samplers and ``DataLoader``, mirroring ``torch.utils.data``
(chapter 4, "Layers").

Written by hand, re-exports only: each name lives in a module generated from book/04_layers.ipynb
(``dataset``, ``sampler``, ``dataloader``, the module names PyTorch uses).
"""

from tensorlib.utils.data.dataloader import (
    DataLoader, default_collate, default_convert, get_worker_info,
)
from tensorlib.utils.data.dataset import (
    Dataset, IterableDataset, Subset, TensorDataset, random_split,
)
from tensorlib.utils.data.sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
)

__all__ = [
    "BatchSampler",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
