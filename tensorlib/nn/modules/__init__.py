"""tensorlib.nn.modules: the module system and the layer library (chapter 4, "Layers").

Written by hand, re-exports only: each class lives in a module generated from
book/04_layers.ipynb.
"""

from tensorlib.nn.modules.activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from tensorlib.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from tensorlib.nn.modules.container import (
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from tensorlib.nn.modules.conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from tensorlib.nn.modules.dropout import Dropout, Dropout2d
from tensorlib.nn.modules.flatten import Flatten, Unflatten
from tensorlib.nn.modules.linear import Identity, Linear, NonDynamicallyQuantizableLinear
from tensorlib.nn.modules.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from tensorlib.nn.modules.mlp import MLP
from tensorlib.nn.modules.module import Module
from tensorlib.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d
from tensorlib.nn.modules.normalization import GroupNorm, LayerNorm, RMSNorm
from tensorlib.nn.modules.padding import (
    CircularPad1d,
    CircularPad2d,
    ConstantPad1d,
    ConstantPad2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    ZeroPad1d,
    ZeroPad2d,
)
from tensorlib.nn.modules.pixelshuffle import PixelShuffle, PixelUnshuffle
from tensorlib.nn.modules.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from tensorlib.nn.modules.sparse import Embedding, PositionalEmbedding
from tensorlib.nn.modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "BCELoss",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "BatchNorm2d",
    "Conv1d",
    "Conv2d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "CrossEntropyLoss",
    "Dropout",
    "Dropout2d",
    "Embedding",
    "Flatten",
    "GELU",
    "GroupNorm",
    "HuberLoss",
    "Identity",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "LayerNorm",
    "Linear",
    "LogSoftmax",
    "MLP",
    "MSELoss",
    "MaxPool1d",
    "MaxPool2d",
    "Module",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "NonDynamicallyQuantizableLinear",
    "ParameterDict",
    "ParameterList",
    "PositionalEmbedding",
    "RMSNorm",
    "ReLU",
    "Sequential",
    "SmoothL1Loss",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
    # Chapter 4, sections 8 and 9.7: Unflatten, the padding layers, pixel shuffle
    "CircularPad1d",
    "CircularPad2d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ZeroPad1d",
    "ZeroPad2d",
    "PixelShuffle",
    "PixelUnshuffle",
    "Unflatten",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    # Chapter 4, section 8.1: PyTorch's other activations
    "CELU",
    "ELU",
    "GLU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "Mish",
    "PReLU",
    "ReLU6",
    "RReLU",
    "SELU",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanhshrink",
    "Threshold",
    # Chapter 5
    "GRU",
    "GRUCell",
    "LSTM",
    "LSTMCell",
    "MultiheadAttention",
    "RNN",
    "RNNCell",
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "init_forget_bias_",
]

# Chapter 5, Attention: recurrent layers, multi-head attention and PyTorch's Transformer layers
# (nn.modules.rnn, nn.modules.attention, nn.modules.transformer)
from tensorlib.nn.modules.attention import MultiheadAttention
from tensorlib.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell, init_forget_bias_
from tensorlib.nn.modules.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
