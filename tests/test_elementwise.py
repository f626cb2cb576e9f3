"""Elementwise functions at NaN: PyTorch's gradients (relu passes the gradient at NaN, abs gives
0)."""

from __future__ import annotations

import numpy as np
import pytest
from _probe import NAN, assert_matches_pytorch, grad_of

import tensorlib as tl


@pytest.mark.parametrize(
    ("name", "fn", "values", "expected"),
    [
        ("relu passes the gradient at NaN", lambda t: t.relu(), [1.0, NAN, -3.0], [1.0, 1.0, 0.0]),
        ("abs: gradient 0 at NaN", lambda t: t.abs(), [1.0, NAN, -3.0], [1.0, 0.0, -1.0]),
    ],
)
def test_gradients_at_nan_match_pytorch(name, fn, values, expected):
    np.testing.assert_array_equal(grad_of(tl, values, fn).numpy(), np.array(expected), err_msg=name)


PROBE = {
    "relu gradient at NaN": lambda lib: grad_of(lib, [1.0, NAN, -3.0], lambda t: t.relu()),
    "abs gradient at NaN": lambda lib: grad_of(lib, [1.0, NAN, -3.0], lambda t: t.abs()),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(PROBE))
def test_matches_pytorch(case):
    assert_matches_pytorch(case, PROBE[case])
