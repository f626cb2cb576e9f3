"""ConcatDataset, ChainDataset, StackDataset and WeightedRandomSampler (chapter 4, section 12.2),
against torch.utils.data. The generators differ, so the weighted sampler is checked for its law
and its reproducibility, not for PyTorch's indices."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.utils.data as ours
from tensorlib.utils.data import (
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    StackDataset,
    TensorDataset,
    WeightedRandomSampler,
)


class Stream(IterableDataset):
    def __init__(self, values: list[int]) -> None:
        self.values = values

    def __iter__(self):
        yield from self.values

    def __len__(self) -> int:
        return len(self.values)


def stream_of(module, values: list[int]):
    """A stream (an ``IterableDataset`` of ``module``, tensorlib's or PyTorch's) of ``values``."""

    class ModuleStream(module.IterableDataset):
        def __iter__(self):
            yield from values

        def __len__(self) -> int:
            return len(values)

    return ModuleStream()


class Numbers(Dataset):
    def __init__(self, start: int, n: int) -> None:
        self.start, self.n = start, n

    def __getitem__(self, index: int) -> int:
        if not 0 <= index < self.n:
            raise IndexError(index)
        return self.start + index

    def __len__(self) -> int:
        return self.n


@pytest.mark.parity
@pytest.mark.parametrize("lengths", [[3], [3, 5], [2, 0, 4, 1]])
def test_concat_dataset_matches_torch(lengths: list[int]) -> None:
    torch_data = pytest.importorskip("torch.utils.data")
    parts = [Numbers(100 * k, n) for k, n in enumerate(lengths)]
    ours, theirs = ConcatDataset(parts), torch_data.ConcatDataset(parts)
    assert ours.cumulative_sizes == theirs.cumulative_sizes
    assert len(ours) == len(theirs) == sum(lengths)
    for index in range(-len(ours), len(ours)):
        assert ours[index] == theirs[index]
    with pytest.raises(ValueError, match="absolute value of index"):
        ours[-len(ours) - 1]
    assert ConcatDataset.cumsum(parts) == torch_data.ConcatDataset.cumsum(parts)


def test_concat_by_plus_and_loader() -> None:
    a = TensorDataset(tl.arange(3.0), tl.arange(3))
    b = TensorDataset(tl.arange(10.0, 12.0), tl.arange(10, 12))
    combined = a + b
    assert isinstance(combined, ConcatDataset) and combined.cumulative_sizes == [3, 5]
    labels = [y.tolist() for _, y in DataLoader(combined, batch_size=2)]
    assert labels == [[0, 1], [2, 10], [11]]
    assert len(combined + a) == 8


@pytest.mark.parity
def test_chain_dataset_matches_torch() -> None:
    torch_data = pytest.importorskip("torch.utils.data")
    streams = [Stream([1, 2]), Stream([]), Stream([3])]
    theirs = [stream_of(torch_data, values) for values in ([1, 2], [], [3])]
    assert list(ChainDataset(streams)) == list(torch_data.ChainDataset(theirs)) == [1, 2, 3]
    assert len(ChainDataset(streams)) == len(torch_data.ChainDataset(theirs)) == 3
    assert list(Stream([1]) + Stream([2, 3])) == [1, 2, 3]
    assert isinstance(Stream([1]) + Stream([2]), ChainDataset)
    assert [b.tolist() for b in DataLoader(ChainDataset(streams), batch_size=2)] == [[1, 2], [3]]


@pytest.mark.parity
def test_stack_dataset_matches_torch() -> None:
    torch_data = pytest.importorskip("torch.utils.data")
    a, b = Numbers(0, 4), Numbers(50, 4)
    for args, kwargs in [((a, b), {}), ((), {"x": a, "y": b})]:
        ours, theirs = StackDataset(*args, **kwargs), torch_data.StackDataset(*args, **kwargs)
        assert len(ours) == len(theirs) == 4
        assert [ours[i] for i in range(4)] == [theirs[i] for i in range(4)]
    batch = next(iter(DataLoader(StackDataset(x=a, y=b), batch_size=3)))
    assert batch["x"].tolist() == [0, 1, 2] and batch["y"].tolist() == [50, 51, 52]


def test_weighted_sampler_law_and_reproducibility() -> None:
    weights = [1.0, 0.0, 3.0, 4.0]
    draws = list(WeightedRandomSampler(weights, 40000, generator=tl.Generator(3)))
    frequencies = np.bincount(draws, minlength=4) / len(draws)
    np.testing.assert_allclose(frequencies, np.array(weights) / 8, atol=0.01)
    assert frequencies[1] == 0
    again = list(WeightedRandomSampler(weights, 40000, generator=tl.Generator(3)))
    assert draws == again
    sampler = WeightedRandomSampler(tl.tensor(weights), 5)
    assert len(sampler) == 5 and all(isinstance(i, int) for i in sampler)
    tl.manual_seed(11)
    first = list(WeightedRandomSampler(weights, 20))
    tl.manual_seed(11)
    assert list(WeightedRandomSampler(weights, 20)) == first
    generator = tl.Generator(5)
    sampler = WeightedRandomSampler(weights, 20, generator=generator)
    assert list(sampler) != list(sampler)  # each pass draws anew


def test_weighted_sampler_without_replacement() -> None:
    for start in range(20):
        draws = list(
            WeightedRandomSampler([1.0, 0.0, 3.0, 4.0], 3, False, generator=tl.Generator(start))
        )
        assert sorted(draws) == [0, 2, 3]
    with pytest.raises(ValueError, match="without replacement"):
        list(WeightedRandomSampler([1.0, 0.0, 3.0], 3, replacement=False))


def test_weighted_sampler_in_a_loader() -> None:
    dataset = TensorDataset(tl.arange(4.0), tl.arange(4))
    sampler = WeightedRandomSampler([0.0, 1.0, 0.0, 1.0], 6, generator=tl.Generator(0))
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)
    labels = [y.tolist() for _, y in loader]
    assert [len(batch) for batch in labels] == [4, 2]
    assert set(sum(labels, [])) <= {1, 3}


@pytest.mark.parity
def test_errors_match_torch() -> None:
    torch_data = pytest.importorskip("torch.utils.data")
    cases = [
        (lambda m: m.ConcatDataset([]), AssertionError, "empty"),
        (lambda m: m.ConcatDataset([stream_of(m, [1])]), AssertionError, "IterableDataset"),
        (lambda m: list(m.ChainDataset([Numbers(0, 2)])), AssertionError, "IterableDataset"),
        (lambda m: m.StackDataset(Numbers(0, 2), Numbers(0, 3)), ValueError, "Size mismatch"),
        (lambda m: m.StackDataset(Numbers(0, 2), y=Numbers(0, 2)), ValueError, "both"),
        (lambda m: m.StackDataset(), ValueError, "At least one"),
        (lambda m: m.WeightedRandomSampler([1.0], 0), ValueError, "num_samples"),
        (lambda m: m.WeightedRandomSampler([1.0], 2.0), ValueError, "num_samples"),
        (lambda m: m.WeightedRandomSampler([1.0], 1, replacement=1), ValueError, "replacement"),
        (lambda m: m.WeightedRandomSampler([[1.0]], 1), ValueError, "1d sequence"),
    ]
    for make, error, message in cases:
        for module in (ours, torch_data):
            with pytest.raises(error, match=message):
                make(module)
