"""tensorlib.utils.data: datasets, samplers, collation and DataLoader, as torch.utils.data.

The two libraries' generators differ, so shuffled orders differ: the tests check behaviour
(each index once per epoch, batch sizes, drop_last, split sizes) in both libraries, and compare
the collated structure and values and the sequential order with torch directly.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    default_collate,
    random_split,
)

Point = collections.namedtuple("Point", ["x", "y"])


class Squares(Dataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __getitem__(self, index: int) -> dict:
        return {"x": np.full(2, index, dtype=np.float32), "y": index * index}

    def __len__(self) -> int:
        return self.n


class Stream(IterableDataset):
    def __iter__(self):
        yield from (float(i) for i in range(7))


def epoch_indices(loader) -> list[list[int]]:
    return [batch[1].numpy().tolist() for batch in loader]


@pytest.mark.parametrize(
    "n, batch_size, drop_last",
    [(10, 3, False), (10, 3, True), (12, 4, False), (5, 8, False), (5, 8, True)],
)
def test_an_epoch_is_a_permutation_cut_into_batches(
    n: int, batch_size: int, drop_last: bool
) -> None:
    dataset = TensorDataset(tl.zeros(n, 2), tl.arange(n))
    loader = DataLoader(
        dataset, batch_size=batch_size, shuffle=True, drop_last=drop_last, generator=tl.Generator(0)
    )
    expected_sizes = [batch_size] * (n // batch_size) + (
        [] if drop_last or n % batch_size == 0 else [n % batch_size]
    )
    orders = []
    for _ in range(3):
        batches = epoch_indices(loader)
        assert [len(b) for b in batches] == expected_sizes
        assert len(loader) == len(expected_sizes)
        flat = sum(batches, [])
        assert len(set(flat)) == len(flat)  # no index twice
        if not drop_last:
            assert sorted(flat) == list(range(n))
        orders.append(flat)
    if n > 5 and not drop_last:
        assert orders[0] != orders[1]  # a new permutation each epoch


def test_a_seeded_generator_repeats_the_order_and_none_follows_manual_seed() -> None:
    dataset = TensorDataset(tl.arange(20))
    first = [
        b[0].numpy().tolist()
        for b in DataLoader(dataset, batch_size=5, shuffle=True, generator=tl.Generator(3))
    ]
    again = [
        b[0].numpy().tolist()
        for b in DataLoader(dataset, batch_size=5, shuffle=True, generator=tl.Generator(3))
    ]
    assert first == again
    tl.manual_seed(7)
    a = list(RandomSampler(range(20)))
    tl.manual_seed(7)
    assert list(RandomSampler(range(20))) == a
    assert sorted(a) == list(range(20))


def test_random_sampler_options() -> None:
    sampler = RandomSampler(range(5), num_samples=12, generator=tl.Generator(1))
    drawn = list(sampler)
    assert len(drawn) == len(sampler) == 12
    # two whole permutations, then a part of one
    assert sorted(drawn[:10]) == sorted(list(range(5)) * 2)
    with_replacement = list(
        RandomSampler(range(5), replacement=True, num_samples=70, generator=tl.Generator(1))
    )
    assert len(with_replacement) == 70 and set(with_replacement) <= set(range(5))
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(5), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(range(5), replacement=1)
    subset = list(SubsetRandomSampler([10, 20, 30], generator=tl.Generator(2)))
    assert sorted(subset) == [10, 20, 30]


def test_batch_sampler_and_custom_samplers() -> None:
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(range(7), 0, False)
    dataset = TensorDataset(tl.arange(6))
    assert epoch_indices_first(DataLoader(dataset, sampler=[5, 0, 3], batch_size=2)) == [
        [5, 0],
        [3],
    ]
    assert epoch_indices_first(DataLoader(dataset, batch_sampler=[[1, 2], [4]])) == [[1, 2], [4]]
    assert [t[0].item() for t in DataLoader(dataset, batch_size=None)] == list(range(6))
    assert list(SequentialSampler(range(3))) == [0, 1, 2]


def epoch_indices_first(loader) -> list[list[int]]:
    return [batch[0].numpy().tolist() for batch in loader]


def test_options_are_checked_as_pytorch_checks_them() -> None:
    dataset = TensorDataset(tl.arange(6))
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(dataset, sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(dataset, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        DataLoader(dataset, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(dataset, num_workers=-1)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(dataset, persistent_workers=True)
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(), shuffle=True)
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        TensorDataset(tl.zeros(3), tl.zeros(4))


def test_workers_give_the_batches_of_the_calling_process() -> None:
    """num_workers > 0 (minGPT's and makemore's default): the same batches, in the same order."""
    dataset = TensorDataset(tl.arange(10), tl.arange(10) * 2)

    def batches(**options):
        loader = DataLoader(
            dataset, batch_size=3, shuffle=True, generator=tl.Generator().manual_seed(4), **options
        )
        return [[part.tolist() for part in batch] for epoch in range(2) for batch in loader]

    assert batches(num_workers=4) == batches()
    assert batches(num_workers=2, persistent_workers=True, prefetch_factor=4) == batches()
    assert DataLoader(dataset, num_workers=3).num_workers == 3
    assert tl.utils.data.get_worker_info() is None


def test_workers_are_refused_where_one_process_would_differ() -> None:
    with pytest.raises(ValueError, match="gives each worker a copy of an IterableDataset"):
        DataLoader(Stream(), batch_size=2, num_workers=2)
    with pytest.raises(ValueError, match="runs worker_init_fn in each worker process"):
        DataLoader(TensorDataset(tl.arange(4)), num_workers=2, worker_init_fn=print)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        DataLoader(TensorDataset(tl.arange(4)), prefetch_factor=2)
    # without workers both are accepted, as in PyTorch
    assert len(list(DataLoader(Stream(), batch_size=2, worker_init_fn=print))) == 4


@pytest.mark.parity
def test_workers_give_pytorchs_batches() -> None:
    torch = pytest.importorskip("torch")
    values = np.arange(12, dtype=np.float32)
    ours = DataLoader(TensorDataset(tl.tensor(values)), batch_size=5, num_workers=2)
    theirs = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.tensor(values)), batch_size=5, num_workers=2
    )
    assert [b.numpy().tolist() for (b,) in ours] == [b.numpy().tolist() for (b,) in theirs]


def test_iterable_dataset_batches_consecutive_samples() -> None:
    batches = [b.numpy().tolist() for b in DataLoader(Stream(), batch_size=3)]
    assert batches == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0]]
    assert [b.numpy().tolist() for b in DataLoader(Stream(), batch_size=3, drop_last=True)] == [
        [0.0, 1.0, 2.0],
        [3.0, 4.0, 5.0],
    ]


@pytest.mark.parametrize(
    "lengths, sizes",
    [([3, 7], [3, 7]), ([0.7, 0.3], [7, 3]), ([0.5, 0.5], [5, 5]), ([0.34, 0.33, 0.33], [4, 3, 3])],
)
def test_random_split_sizes_and_disjoint_cover(lengths, sizes) -> None:
    parts = random_split(range(10), lengths, generator=tl.Generator(0))
    assert [len(p) for p in parts] == sizes
    seen = sorted(i for p in parts for i in (p[k] for k in range(len(p))))
    assert seen == list(range(10))
    assert all(isinstance(p, Subset) for p in parts)


def test_random_split_refuses_wrong_lengths() -> None:
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(10), [3, 3])


def test_collate_structure() -> None:
    batch = default_collate(
        [
            {"a": (1, 2.5, "s"), "b": [np.ones(2), np.zeros(2)]},
            {"a": (3, 4.5, "t"), "b": [np.zeros(2), np.ones(2)]},
        ]
    )
    assert (
        set(batch) == {"a", "b"} and isinstance(batch["a"], list) and isinstance(batch["b"], list)
    )
    assert (
        batch["a"][0].dtype == tl.int64
        and batch["a"][1].dtype == tl.float64
        and batch["a"][2] == ["s", "t"]
    )
    assert batch["b"][0].shape == (2, 2) and batch["b"][0].dtype == tl.float64
    point = default_collate([Point(1, 2), Point(3, 4)])
    assert isinstance(point, Point) and point.x.numpy().tolist() == [1, 3]
    assert default_collate([True, False]).dtype == tl.bool
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object(), object()])


# ------------------------------------------------------------------------------ parity

SAMPLES = [
    [(np.arange(3, dtype=np.float32) + i, i) for i in range(4)],
    [
        {
            "image": np.full((2, 2), i, dtype=np.float64),
            "label": i,
            "score": 0.5 * i,
            "name": f"n{i}",
        }
        for i in range(3)
    ],
    [[np.float32(i), np.int64(2 * i), True] for i in range(3)],
    [Point(np.ones(2) * i, float(i)) for i in range(2)],
    [(np.arange(2, dtype=np.int32) * i, {"nested": (i, [1.5 * i])}) for i in range(3)],
]


def same_structure(ours, theirs, torch) -> None:
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tl.Tensor), type(ours)
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), (
            ours.dtype,
            theirs.dtype,
        )
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        for key in theirs:
            same_structure(ours[key], theirs[key], torch)
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (type(ours), type(theirs))
        for a, b in zip(ours, theirs, strict=True):
            same_structure(a, b, torch)
    else:
        assert ours == theirs


@pytest.mark.parity
@pytest.mark.parametrize(
    "samples", SAMPLES, ids=["tuple", "dict", "list-of-scalars", "namedtuple", "nested"]
)
def test_default_collate_matches_pytorch(samples) -> None:
    torch = pytest.importorskip("torch")
    same_structure(default_collate(samples), torch.utils.data.default_collate(samples), torch)


@pytest.mark.parity
@pytest.mark.parametrize(
    "batch_size, drop_last", [(1, False), (3, False), (3, True), (None, False)]
)
def test_sequential_loader_matches_pytorch(batch_size, drop_last) -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((10, 3)).astype(np.float32)
    y = np.arange(10)
    ours = DataLoader(
        TensorDataset(tl.tensor(x), tl.tensor(y)), batch_size=batch_size, drop_last=drop_last
    )
    theirs = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
        batch_size=batch_size,
        drop_last=drop_last,
    )
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        same_structure(a, b, torch)
    ours_dicts = list(DataLoader(Squares(5), batch_size=2))
    theirs_dicts = list(torch.utils.data.DataLoader(Squares(5), batch_size=2))
    for a, b in zip(ours_dicts, theirs_dicts, strict=True):
        same_structure(a, b, torch)


@pytest.mark.parity
@pytest.mark.parametrize("n, batch_size, drop_last", [(10, 3, False), (10, 3, True), (7, 7, False)])
def test_shuffled_loaders_behave_alike(n, batch_size, drop_last) -> None:
    torch = pytest.importorskip("torch")
    ours = DataLoader(
        TensorDataset(tl.arange(n)),
        batch_size=batch_size,
        shuffle=True,
        drop_last=drop_last,
        generator=tl.Generator(0),
    )
    theirs = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.arange(n)),
        batch_size=batch_size,
        shuffle=True,
        drop_last=drop_last,
        generator=torch.Generator().manual_seed(0),
    )
    assert len(ours) == len(theirs)
    for loader in (ours, theirs):
        batches = [b[0].numpy().tolist() for b in loader]
        flat = sum(batches, [])
        assert [len(b) for b in batches] == (
            [batch_size] * (n // batch_size)
            + ([n % batch_size] if n % batch_size and not drop_last else [])
        )
        assert len(set(flat)) == len(flat) and (drop_last or sorted(flat) == list(range(n)))


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore:Length of split")  # torch warns about empty subsets
@pytest.mark.parametrize(
    "lengths", [[3, 7], [0.7, 0.3], [0.34, 0.33, 0.33], [0.1] * 10, [0.25, 0.25, 0.25, 0.25]]
)
def test_random_split_sizes_match_pytorch(lengths) -> None:
    torch = pytest.importorskip("torch")
    for n in (10, 11, 13):
        if all(isinstance(v, int) for v in lengths) and sum(lengths) != n:
            continue
        ours = [len(s) for s in random_split(range(n), lengths, generator=tl.Generator(0))]
        theirs = [
            len(s)
            for s in torch.utils.data.random_split(
                range(n), lengths, generator=torch.Generator().manual_seed(0)
            )
        ]
        assert ours == theirs
        assert sum(ours) == n
