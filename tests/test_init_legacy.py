"""nn.init's sparse_ and PyTorch's pre-0.4 initializer names (chapter 3, section 10)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.nn import init

OLD_NAMES = ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
             "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]


def _call(module, name, lib):
    shape = (4, 2, 3, 3) if name == "dirac" else (6, 5)
    tensor = lib.empty(*shape)
    args = {"constant": (0.5,), "sparse": (0.3,)}.get(name, ())
    return getattr(module, name)(tensor, *args)


@pytest.mark.parametrize("name", OLD_NAMES)
def test_old_names_warn_as_pytorch_and_fill_as_the_new_ones(name):
    torch = pytest.importorskip("torch")
    with pytest.warns(FutureWarning) as ours:
        result = _call(init, name, tl)
    with pytest.warns(FutureWarning) as theirs:
        _call(torch.nn.init, name, torch)
    assert str(ours[0].message) == str(theirs[0].message)
    assert ours[0].filename == __file__  # the warning points at the caller, as PyTorch's
    assert getattr(init, name).__name__ == name and isinstance(result, tl.Tensor)
    if name in ("constant", "eye", "dirac"):  # deterministic: the same values as the new name
        new = getattr(init, name + "_")(tl.empty(*result.shape), *((0.5,) if name == "constant"
                                                                    else ()))
        assert tl.equal(result, new)


@pytest.mark.parametrize("rows, sparsity", [(10, 0.25), (7, 0.5), (5, 0.0), (4, 1.0)])
def test_sparse_zeroes_ceil_sparsity_rows_in_every_column(rows, sparsity):
    weight = init.sparse_(tl.empty(rows, 6), sparsity, std=2.0, generator=tl.Generator(3)).numpy()
    zeros = (weight == 0).sum(axis=0)
    assert zeros.tolist() == [math.ceil(sparsity * rows)] * 6
    again = init.sparse_(tl.empty(rows, 6), sparsity, std=2.0, generator=tl.Generator(3)).numpy()
    np.testing.assert_array_equal(weight, again)  # same generator, same bits


def test_sparse_values_have_the_standard_deviation_asked_for():
    weight = init.sparse_(tl.empty(400, 300), 0.1, std=0.5, generator=tl.Generator(0)).numpy()
    kept = weight[weight != 0]
    assert abs(kept.std() - 0.5) < 0.01 and abs(kept.mean()) < 0.01
    assert weight.dtype == np.float32


def test_sparse_refuses_what_pytorch_refuses():
    torch = pytest.importorskip("torch")
    for lib, module in ((tl, init), (torch, torch.nn.init)):
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
            module.sparse_(lib.empty(2, 3, 4), 0.1)
