"""``dtype=`` and ``device=`` are read the same way everywhere, by ``tensorlib.parse_to``'s rules.

Every creation function, ``Tensor.to`` and ``Tensor.type``, the random functions, ``Module.to``
and the layers refuse a dtype tensorlib does not support, with the list of the supported ones.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

_CREATORS = {
    "zeros": lambda dt: tl.zeros(2, dtype=dt),
    "ones": lambda dt: tl.ones(2, dtype=dt),
    "empty": lambda dt: tl.empty(2, dtype=dt),
    "full": lambda dt: tl.full((2,), 1, dtype=dt),
    "arange": lambda dt: tl.arange(3, dtype=dt),
    "linspace": lambda dt: tl.linspace(0, 1, 3, dtype=dt),
    "eye": lambda dt: tl.eye(2, dtype=dt),
    "tensor": lambda dt: tl.tensor([1, 2], dtype=dt),
    "Tensor": lambda dt: tl.Tensor([1.0, 2.0], dt),
    "zeros_like": lambda dt: tl.zeros_like(tl.ones(2), dtype=dt),
    "ones_like": lambda dt: tl.ones_like(tl.ones(2), dtype=dt),
    "full_like": lambda dt: tl.full_like(tl.ones(2), 1, dtype=dt),
    "empty_like": lambda dt: tl.empty_like(tl.ones(2), dtype=dt),
    "new_zeros": lambda dt: tl.ones(2).new_zeros(2, dtype=dt),
    "Tensor.to": lambda dt: tl.ones(2).to(dtype=dt),
    "Tensor.type": lambda dt: tl.ones(2).type(dt),
    "Module.to": lambda dt: tl.nn.Linear(2, 2).to(dtype=dt),
    "rand": lambda dt: tl.rand(2, dtype=dt),
    "randn_like": lambda dt: tl.randn_like(tl.ones(2), dtype=dt),
    "randint": lambda dt: tl.randint(0, 3, (2,), dtype=dt),
    "randperm": lambda dt: tl.randperm(3, dtype=dt),
    "randn": lambda dt: tl.randn(2, dtype=dt),
    "nn.Linear": lambda dt: tl.nn.Linear(2, 2, dtype=dt),
    "nn.Embedding": lambda dt: tl.nn.Embedding(3, 2, dtype=dt),
}


@pytest.mark.parametrize("dtype", [str, object, complex, np.complex64, "datetime64[s]", "U3", "S3"],
                         ids=["str", "object", "complex", "complex64", "datetime64", "U3", "S3"])
@pytest.mark.parametrize("where", list(_CREATORS))
def test_unsupported_dtypes_are_refused_everywhere_with_the_list_of_dtypes(where, dtype):
    with pytest.raises(TypeError, match=r"float16, float32(,| or) float64"):
        _CREATORS[where](dtype)


def test_supported_dtypes_by_any_spelling_are_the_same_dtype():
    for spelling in (tl.float64, np.float64, "float64", np.dtype("float64")):
        assert tl.zeros(1, dtype=spelling).dtype == np.float64
    assert tl.ones(2).to(dtype="float16").dtype == np.float16


def test_module_to_reads_its_arguments_as_tensor_to_does():
    model = tl.nn.Linear(2, 2)
    # to(tensor): its dtype
    assert model.to(tl.ones(1, dtype=tl.float64)).weight.dtype == np.float64
    assert model.to("cpu", tl.float16).weight.dtype == np.float16
    assert model.to(dtype="float32", device=tl.device("cpu")).weight.dtype == np.float32
    with pytest.raises(TypeError, match="floating point dtypes, but got desired dtype=int64"):
        model.to(tl.int64)
    with pytest.raises(TypeError, match="at most 2 positional"):
        model.to("cpu", tl.float32, tl.float64)
    with pytest.raises(ValueError, match="CPU only"):
        model.to("cuda")
