"""Making tensors from Python and numpy data: PyTorch's refusals.

A Python int outside int64 raises (numpy would store it as uint64 or an object array; as a float
it is fine), and a big-endian array is refused by ``from_numpy``, ``tensor`` and ``Tensor`` alike.
"""

from __future__ import annotations

import numpy as np
import pytest
from _probe import assert_matches_pytorch

import tensorlib as tl


@pytest.mark.parametrize(
    "data",
    [[2**63], 2**70, [-(2**63) - 1], [[1, 2], [3, 2**64]]],
    ids=["2**63", "2**70", "-2**63-1", "nested"],
)
def test_python_ints_beyond_int64_raise(data):
    with pytest.raises(ValueError, match="Overflow"):
        tl.tensor(data)


def test_python_ints_at_the_edge_of_int64_and_big_ints_as_floats_work():
    assert tl.tensor([2**63 - 1, -(2**63)]).tolist() == [2**63 - 1, -(2**63)]
    # as floats: fine, as in torch
    assert tl.tensor([2**70], dtype=tl.float32).item() == pytest.approx(2.0**70)


@pytest.mark.parametrize(
    "make", [tl.from_numpy, tl.tensor, tl.Tensor], ids=["from_numpy", "tensor", "Tensor"]
)
def test_big_endian_arrays_are_refused(make):
    with pytest.raises(ValueError, match="byte order"):
        make(np.arange(3, dtype=">f4"))
    native = make(np.arange(3, dtype=">f4").astype("=f4"))
    assert native.tolist() == [0.0, 1.0, 2.0]


PROBE = {
    "tensor([2**63])": lambda lib: lib.tensor([2**63]),
    "tensor(2**70, float32)": lambda lib: lib.tensor([2**70], dtype=lib.float32),
    "from_numpy(big-endian)": lambda lib: lib.from_numpy(np.arange(3, dtype=">f4")),
    "tensor(big-endian)": lambda lib: lib.tensor(np.arange(3, dtype=">f4")),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(PROBE))
def test_matches_pytorch(case):
    assert_matches_pytorch(case, PROBE[case])
