"""Version counters: every value a backward reads is checked before any gradient is written.

Index, mask and condition tensors count too, although they need no gradient: changed in place
after use, the backward raises PyTorch's error instead of silently using the new values. The
indexed tensor itself is not read by ``x[i]``'s backward, so changing it stays allowed.
"""

from __future__ import annotations

import numpy as np
import pytest
from _probe import assert_matches_pytorch, changed_after_use

import tensorlib as tl

MODIFIED = "modified by an inplace operation"


def _x():
    return tl.tensor([1.0, 2.0, 3.0], requires_grad=True)


def test_an_integer_index_changed_after_use_is_caught():
    x, i = _x(), tl.tensor([0, 0])
    y = x[i].sum()
    with tl.no_grad():
        i.fill_(2)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()
    assert x.grad is None


def test_an_index_inside_a_tuple_key_is_caught():
    x = tl.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    i = tl.tensor([2, 0])
    y = x[:, i].sum()
    with tl.no_grad():
        i[0] = 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_a_bool_mask_index_changed_after_use_is_caught():
    x, mask = _x(), tl.tensor([True, False, True])
    y = x[mask].sum()
    with tl.no_grad():
        mask.fill_(True)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_a_gather_index_changed_after_use_is_caught():
    x, index = _x(), tl.tensor([0, 0])
    y = x.gather(0, index).sum()
    with tl.no_grad():
        index.fill_(1)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_a_masked_fill_mask_changed_after_use_is_caught():
    x, mask = _x(), tl.tensor([True, False, False])
    y = x.masked_fill(mask, 0.0).sum()
    with tl.no_grad():
        mask.fill_(True)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_a_where_condition_changed_after_use_is_caught():
    x, condition = _x(), tl.tensor([True, False, True])
    y = tl.where(condition, x, 0.0).sum()
    with tl.no_grad():
        condition.fill_(False)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_unchanged_index_mask_and_condition_give_pytorchs_gradients():
    x = _x()
    i, mask = tl.tensor([0, 0]), tl.tensor([True, False, True])
    (
        x[i].sum()
        + x.gather(0, i).sum()
        + x[mask].sum()
        + x.masked_fill(mask, 0.0).sum()
        + tl.where(mask, x, 0.0).sum()
    ).backward()
    assert x.grad.tolist() == [2 + 2 + 1 + 0 + 1, 0 + 0 + 0 + 1 + 0, 0 + 0 + 1 + 0 + 1]


def test_changing_the_indexed_tensor_itself_is_still_allowed():
    """x[i]'s backward reads i, not x (as in PyTorch): an update of x under no_grad is fine."""
    x, i = _x(), tl.tensor([0, 2])
    y = x[i].sum()
    with tl.no_grad():
        x.mul_(2.0)
    y.backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


def _index_changed_in_place(lib):
    x, i = lib.tensor([1.0, 2.0, 3.0], requires_grad=True), lib.tensor([0, 0])
    y = x[i].sum()
    with lib.no_grad():
        i.fill_(2)
    y.backward()
    return x.grad


PROBE = {
    "index changed in place after use": _index_changed_in_place,
    "bool mask changed after use": lambda lib: changed_after_use(
        lib, lambda lib, x, m: x[m], "mask"
    ),
    "gather index changed after use": lambda lib: changed_after_use(
        lib, lambda lib, x, i: x.gather(0, i), "index"
    ),
    "masked_fill mask changed after use": lambda lib: changed_after_use(
        lib, lambda lib, x, m: x.masked_fill(m, 0.0), "mask"
    ),
    "where condition changed after use": lambda lib: changed_after_use(
        lib, lambda lib, x, m: lib.where(m, x, 0.0), "mask"
    ),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(PROBE))
def test_matches_pytorch(case):
    assert_matches_pytorch(case, PROBE[case])
