"""tensorlib.utils.data: datasets, samplers and ``DataLoader``, mirroring ``torch.utils.data``
(chapter 4, "Layers").

Written by hand, re-exports only: each name lives in a module generated from book/04_layers.ipynb
(``dataset``, ``sampler``, ``dataloader``, ``distributed``, the module names PyTorch uses).
"""

from tensorlib.utils.data.dataloader import (
    DataLoader, default_collate, default_convert, get_worker_info,
)
from tensorlib.utils.data.distributed import DistributedSampler
from tensorlib.utils.data.dataset import (
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
    random_split,
)
from tensorlib.utils.data.sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
