"""A layer, a loss or a layer function given a list or a numpy array raises a TypeError that says
"expected a Tensor, got list", as PyTorch raises a TypeError (chapter 4). Before, a list gave an
AttributeError about ``.ndim`` and a numpy array was silently accepted by some layers."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn as nn
import tensorlib.nn.functional as F

MODULES = {
    "Linear": (lambda: nn.Linear(3, 2), (2, 3)),
    "Conv2d": (lambda: nn.Conv2d(1, 2, 3), (1, 1, 5, 5)),
    "LayerNorm": (lambda: nn.LayerNorm(3), (2, 3)),
    "RMSNorm": (lambda: nn.RMSNorm(3), (2, 3)),
    "Dropout": (lambda: nn.Dropout(0.5), (2, 3)),
    "MaxPool2d": (lambda: nn.MaxPool2d(2), (1, 1, 4, 4)),
    "AvgPool2d": (lambda: nn.AvgPool2d(2), (1, 1, 4, 4)),
    "Flatten": (lambda: nn.Flatten(), (2, 3, 4)),
    "ReLU": (lambda: nn.ReLU(), (2, 3)),
    "GELU": (lambda: nn.GELU(), (2, 3)),
    "Tanh": (lambda: nn.Tanh(), (2, 3)),
    "Sigmoid": (lambda: nn.Sigmoid(), (2, 3)),
    "SiLU": (lambda: nn.SiLU(), (2, 3)),
    "Softmax": (lambda: nn.Softmax(dim=-1), (2, 3)),
    "LogSoftmax": (lambda: nn.LogSoftmax(dim=-1), (2, 3)),
    "Sequential": (lambda: nn.Sequential(nn.Linear(3, 2), nn.ReLU()), (2, 3)),
    "MLP": (lambda: nn.MLP(3, [4], 2), (2, 3)),
}


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize("kind", ["list", "ndarray"])
def test_a_module_refuses_non_tensor_input_with_a_type_error(name, kind):
    make, shape = MODULES[name]
    array = np.ones(shape, dtype=np.float32)
    value = array.tolist() if kind == "list" else array
    module = make()
    with pytest.raises(
        TypeError, match=f"expected a Tensor, got {'list' if kind == 'list' else 'ndarray'}"
    ):
        module(value)
    assert module(tl.tensor(array)).shape  # the same data as a tensor works


def test_embedding_refuses_a_list_of_ids():
    table = nn.Embedding(5, 2)
    with pytest.raises(TypeError, match="embedding: expected a Tensor, got list"):
        table([1, 2])
    assert table(tl.tensor([1, 2])).shape == (2, 2)


LOSSES = {
    "CrossEntropyLoss": (nn.CrossEntropyLoss, np.zeros((2, 3), np.float32), np.array([0, 2])),
    "NLLLoss": (nn.NLLLoss, np.full((2, 3), -1.0, np.float32), np.array([0, 2])),
    "MSELoss": (nn.MSELoss, np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)),
    "BCEWithLogitsLoss": (
        nn.BCEWithLogitsLoss,
        np.zeros((2, 3), np.float32),
        np.ones((2, 3), np.float32),
    ),
}


@pytest.mark.parametrize("name", LOSSES)
def test_a_loss_module_refuses_non_tensor_input_and_target(name):
    make, input, target = LOSSES[name]
    loss = make()
    with pytest.raises(TypeError, match=f"{name}: expected a Tensor, got list \\(as input\\)"):
        loss(input.tolist(), tl.tensor(target))
    with pytest.raises(TypeError, match=f"{name}: expected a Tensor, got ndarray \\(as target\\)"):
        loss(tl.tensor(input), target)
    assert loss(tl.tensor(input), tl.tensor(target)).ndim == 0


FUNCTIONS = {
    "linear": lambda x: F.linear(x, tl.ones(2, 3)),
    "conv2d": lambda x: F.conv2d(x, tl.ones(2, 1, 3, 3)),
    "unfold": lambda x: F.unfold(x, 3),
    "layer_norm": lambda x: F.layer_norm(x, 5),
    "rms_norm": lambda x: F.rms_norm(x, 5),
    "dropout": lambda x: F.dropout(x, 0.5),
    "pad": lambda x: F.pad(x, (1, 1)),
    "max_pool2d": lambda x: F.max_pool2d(x, 2),
    "avg_pool2d": lambda x: F.avg_pool2d(x, 2),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_layer_function_refuses_a_list(name):
    with pytest.raises(TypeError, match=f"{name}: expected a Tensor, got list"):
        FUNCTIONS[name](np.ones((1, 1, 5, 5), np.float32).tolist())


def test_positional_embedding_refuses_an_array():
    pos = nn.PositionalEmbedding(context_length=4, embedding_dim=2)
    with pytest.raises(TypeError, match="PositionalEmbedding: expected a Tensor, got ndarray"):
        pos(np.zeros((1, 3, 2), np.float32))
    assert pos(tl.zeros(1, 3, 2)).shape == (1, 3, 2)
