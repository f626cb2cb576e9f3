"""Indexing with a uint8 tensor is a mask, with PyTorch's deprecation warning, and has a
gradient."""

from __future__ import annotations

import numpy as np
import pytest
from _probe import assert_matches_pytorch

import tensorlib as tl


def test_a_uint8_index_is_a_mask():
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.warns(UserWarning, match="uint8 is deprecated"):
        picked = x[tl.tensor(np.array([1, 0, 1], np.uint8))]
    assert picked.tolist() == [1.0, 3.0]
    picked.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]
    rows = tl.tensor(np.arange(6.0).reshape(2, 3))
    with pytest.warns(UserWarning, match="use a dtype bool"):
        assert rows[tl.tensor(np.array([0, 1], np.uint8)), 1:].tolist() == [[4.0, 5.0]]


PROBE = {
    "uint8 mask index": lambda lib: lib.tensor([1.0, 2.0, 3.0])[
        lib.tensor(np.array([1, 0, 1], np.uint8))
    ],
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(PROBE))
def test_matches_pytorch(case):
    assert_matches_pytorch(case, PROBE[case])
