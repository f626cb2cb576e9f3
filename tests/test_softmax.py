"""Softmax and log-softmax over an empty dimension keep the shape, as in PyTorch."""

from __future__ import annotations

import pytest
from _probe import assert_matches_pytorch

import tensorlib as tl


def test_softmax_and_log_softmax_of_an_empty_dim_keep_the_shape():
    assert tl.zeros(2, 0).softmax(dim=1).shape == (2, 0)
    assert tl.zeros(2, 0).log_softmax(dim=1).shape == (2, 0)


PROBE = {
    "softmax over a size-0 dim": lambda lib: lib.zeros(2, 0).softmax(dim=1),
    "log_softmax over a size-0 dim": lambda lib: lib.zeros(2, 0).log_softmax(dim=1),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(PROBE))
def test_matches_pytorch(case):
    assert_matches_pytorch(case, PROBE[case])
