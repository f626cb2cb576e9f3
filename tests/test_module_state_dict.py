"""``Module.load_state_dict`` is all-or-nothing, even when a target cannot be written.

A read-only target (a broadcast buffer) is refused while the state is validated, before any
tensor is overwritten, and reported together with the other errors (size mismatches).
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl


def test_load_state_dict_refuses_a_read_only_target_before_copying_anything():
    layer = tl.nn.Linear(2, 3, generator=tl.Generator(0))
    layer.register_buffer("scale", tl.zeros(1).expand(3))  # a read-only broadcast view
    weight_before = layer.weight.detach().numpy().copy()
    state = {name: tl.ones(*tensor.shape) for name, tensor in layer.state_dict().items()}
    with pytest.raises(
        RuntimeError, match=r"cannot copy into scale: the module's tensor is read-only"
    ):
        layer.load_state_dict(state)
    assert np.array_equal(layer.weight.detach().numpy(), weight_before), (
        "weight was overwritten by a failed load"
    )
    assert layer.bias is not None and not np.all(layer.bias.detach().numpy() == 1.0)


def test_load_state_dict_reports_read_only_targets_with_the_other_errors():
    layer = tl.nn.Linear(2, 3)
    layer.register_buffer("scale", tl.zeros(1).expand(3))
    state = dict(layer.state_dict())
    state["weight"] = tl.zeros(4, 4)
    with pytest.raises(RuntimeError) as error:
        layer.load_state_dict(state)
    message = str(error.value)
    assert "size mismatch for weight" in message and "cannot copy into scale" in message
