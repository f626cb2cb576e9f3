"""tensorlib.nn: layers, losses and initialisation, mirroring torch.nn.

Written by hand, re-exports only.
"""

# Chapter 2, Autograd: the functional ops (tensorlib.nn.functional)
from tensorlib.nn import functional as functional

# Chapter 3, Initialization: in-place initializers (tensorlib.nn.init)
from tensorlib.nn import init as init

# Chapter 4, Layers: Parameter, Module and the layer library (tensorlib.nn.parameter,
# tensorlib.nn.modules)
from tensorlib.nn import modules as modules
from tensorlib.nn.modules import GELU as GELU
from tensorlib.nn.modules import MLP as MLP
from tensorlib.nn.modules import AdaptiveAvgPool1d as AdaptiveAvgPool1d
from tensorlib.nn.modules import AdaptiveAvgPool2d as AdaptiveAvgPool2d
from tensorlib.nn.modules import AdaptiveAvgPool3d as AdaptiveAvgPool3d
from tensorlib.nn.modules import AdaptiveMaxPool2d as AdaptiveMaxPool2d
from tensorlib.nn.modules import AdaptiveMaxPool3d as AdaptiveMaxPool3d
from tensorlib.nn.modules import AvgPool1d as AvgPool1d
from tensorlib.nn.modules import AvgPool2d as AvgPool2d
from tensorlib.nn.modules import AvgPool3d as AvgPool3d
from tensorlib.nn.modules import BatchNorm1d as BatchNorm1d
from tensorlib.nn.modules import BatchNorm2d as BatchNorm2d
from tensorlib.nn.modules import BatchNorm3d as BatchNorm3d
from tensorlib.nn.modules import SyncBatchNorm as SyncBatchNorm
from tensorlib.nn.modules import BCELoss as BCELoss
from tensorlib.nn.modules import BCEWithLogitsLoss as BCEWithLogitsLoss
from tensorlib.nn.modules import Conv1d as Conv1d
from tensorlib.nn.modules import Conv2d as Conv2d
from tensorlib.nn.modules import Conv3d as Conv3d
from tensorlib.nn.modules import ConvTranspose1d as ConvTranspose1d
from tensorlib.nn.modules import ConvTranspose2d as ConvTranspose2d
from tensorlib.nn.modules import ConvTranspose3d as ConvTranspose3d
from tensorlib.nn.modules import CrossEntropyLoss as CrossEntropyLoss
from tensorlib.nn.modules import Dropout as Dropout
from tensorlib.nn.modules import Dropout2d as Dropout2d
from tensorlib.nn.modules import Embedding as Embedding
from tensorlib.nn.modules import DataParallel as DataParallel
from tensorlib.nn.modules import Flatten as Flatten
from tensorlib.nn.modules import HuberLoss as HuberLoss
from tensorlib.nn.modules import GroupNorm as GroupNorm
from tensorlib.nn.modules import Identity as Identity
from tensorlib.nn.modules import InstanceNorm1d as InstanceNorm1d
from tensorlib.nn.modules import InstanceNorm2d as InstanceNorm2d
from tensorlib.nn.modules import InstanceNorm3d as InstanceNorm3d
from tensorlib.nn.modules import LayerNorm as LayerNorm
from tensorlib.nn.modules import Linear as Linear
from tensorlib.nn.modules import LogSoftmax as LogSoftmax
from tensorlib.nn.modules import MaxPool1d as MaxPool1d
from tensorlib.nn.modules import MaxPool2d as MaxPool2d
from tensorlib.nn.modules import MaxPool3d as MaxPool3d
from tensorlib.nn.modules import MaxUnpool1d as MaxUnpool1d
from tensorlib.nn.modules import MaxUnpool2d as MaxUnpool2d
from tensorlib.nn.modules import MaxUnpool3d as MaxUnpool3d
from tensorlib.nn.modules import Module as Module
from tensorlib.nn.modules import ModuleDict as ModuleDict
from tensorlib.nn.modules import ModuleList as ModuleList
from tensorlib.nn.modules import MSELoss as MSELoss
from tensorlib.nn.modules import Unfold as Unfold
from tensorlib.nn.modules import CosineEmbeddingLoss as CosineEmbeddingLoss
from tensorlib.nn.modules import CosineSimilarity as CosineSimilarity
from tensorlib.nn.modules import GaussianNLLLoss as GaussianNLLLoss
from tensorlib.nn.modules import HingeEmbeddingLoss as HingeEmbeddingLoss
from tensorlib.nn.modules import KLDivLoss as KLDivLoss
from tensorlib.nn.modules import L1Loss as L1Loss
from tensorlib.nn.modules import MarginRankingLoss as MarginRankingLoss
from tensorlib.nn.modules import MultiLabelSoftMarginLoss as MultiLabelSoftMarginLoss
from tensorlib.nn.modules import MultiMarginLoss as MultiMarginLoss
from tensorlib.nn.modules import PairwiseDistance as PairwiseDistance
from tensorlib.nn.modules import PoissonNLLLoss as PoissonNLLLoss
from tensorlib.nn.modules import SoftMarginLoss as SoftMarginLoss
from tensorlib.nn.modules import TripletMarginLoss as TripletMarginLoss
from tensorlib.nn.modules import CTCLoss as CTCLoss
from tensorlib.nn.modules import MultiLabelMarginLoss as MultiLabelMarginLoss
from tensorlib.nn.modules import TripletMarginWithDistanceLoss as TripletMarginWithDistanceLoss
from tensorlib.nn.modules import NLLLoss as NLLLoss
from tensorlib.nn.modules import ParameterDict as ParameterDict
from tensorlib.nn.modules import ParameterList as ParameterList
from tensorlib.nn.modules import PositionalEmbedding as PositionalEmbedding
from tensorlib.nn.modules import ReLU as ReLU
from tensorlib.nn.modules import RMSNorm as RMSNorm
from tensorlib.nn.modules import Sequential as Sequential
from tensorlib.nn.modules import Sigmoid as Sigmoid
from tensorlib.nn.modules import SiLU as SiLU
from tensorlib.nn.modules import SmoothL1Loss as SmoothL1Loss
from tensorlib.nn.modules import Softmax as Softmax
from tensorlib.nn.modules import Tanh as Tanh
# section 8.1: PyTorch's other activations
from tensorlib.nn.modules import CELU as CELU
from tensorlib.nn.modules import ELU as ELU
from tensorlib.nn.modules import GLU as GLU
from tensorlib.nn.modules import Hardshrink as Hardshrink
from tensorlib.nn.modules import Hardsigmoid as Hardsigmoid
from tensorlib.nn.modules import Hardswish as Hardswish
from tensorlib.nn.modules import Hardtanh as Hardtanh
from tensorlib.nn.modules import LeakyReLU as LeakyReLU
from tensorlib.nn.modules import LogSigmoid as LogSigmoid
from tensorlib.nn.modules import Mish as Mish
from tensorlib.nn.modules import PReLU as PReLU
from tensorlib.nn.modules import ReLU6 as ReLU6
from tensorlib.nn.modules import RReLU as RReLU
from tensorlib.nn.modules import SELU as SELU
from tensorlib.nn.modules import Softmin as Softmin
from tensorlib.nn.modules import AlphaDropout as AlphaDropout
from tensorlib.nn.modules import ChannelShuffle as ChannelShuffle
from tensorlib.nn.modules import Dropout1d as Dropout1d
from tensorlib.nn.modules import Dropout3d as Dropout3d
from tensorlib.nn.modules import FeatureAlphaDropout as FeatureAlphaDropout
from tensorlib.nn.modules import Softmax2d as Softmax2d
from tensorlib.nn.modules import AdaptiveMaxPool1d as AdaptiveMaxPool1d
from tensorlib.nn.modules import Bilinear as Bilinear
from tensorlib.nn.modules import CircularPad3d as CircularPad3d
from tensorlib.nn.modules import ConstantPad3d as ConstantPad3d
from tensorlib.nn.modules import Fold as Fold
from tensorlib.nn.modules import LPPool1d as LPPool1d
from tensorlib.nn.modules import LPPool2d as LPPool2d
from tensorlib.nn.modules import LPPool3d as LPPool3d
from tensorlib.nn.modules import FractionalMaxPool2d as FractionalMaxPool2d
from tensorlib.nn.modules import FractionalMaxPool3d as FractionalMaxPool3d
from tensorlib.nn.modules import LocalResponseNorm as LocalResponseNorm
from tensorlib.nn.modules import ReflectionPad3d as ReflectionPad3d
from tensorlib.nn.modules import ReplicationPad3d as ReplicationPad3d
from tensorlib.nn.modules import ZeroPad3d as ZeroPad3d
from tensorlib.nn.modules import EmbeddingBag as EmbeddingBag
from tensorlib.nn.modules import Softplus as Softplus
from tensorlib.nn.modules import Softshrink as Softshrink
from tensorlib.nn.modules import Softsign as Softsign
from tensorlib.nn.modules import Tanhshrink as Tanhshrink
from tensorlib.nn.modules import Threshold as Threshold
# sections 8 and 9.7: Unflatten, the padding layers, pixel shuffle
from tensorlib.nn.modules import CircularPad1d as CircularPad1d
from tensorlib.nn.modules import CircularPad2d as CircularPad2d
from tensorlib.nn.modules import ConstantPad1d as ConstantPad1d
from tensorlib.nn.modules import ConstantPad2d as ConstantPad2d
from tensorlib.nn.modules import ReflectionPad1d as ReflectionPad1d
from tensorlib.nn.modules import ReflectionPad2d as ReflectionPad2d
from tensorlib.nn.modules import ReplicationPad1d as ReplicationPad1d
from tensorlib.nn.modules import ReplicationPad2d as ReplicationPad2d
from tensorlib.nn.modules import ZeroPad1d as ZeroPad1d
from tensorlib.nn.modules import ZeroPad2d as ZeroPad2d
from tensorlib.nn.modules import PixelShuffle as PixelShuffle
from tensorlib.nn.modules import PixelUnshuffle as PixelUnshuffle
from tensorlib.nn.modules import Unflatten as Unflatten
# section 10.2: resampling
from tensorlib.nn.modules import Upsample as Upsample
from tensorlib.nn.modules import UpsamplingBilinear2d as UpsamplingBilinear2d
from tensorlib.nn.modules import UpsamplingNearest2d as UpsamplingNearest2d
from tensorlib.nn import parameter as parameter
from tensorlib.nn.parameter import Buffer as Buffer
from tensorlib.nn.parameter import Parameter as Parameter
from tensorlib.nn.parameter import UninitializedBuffer as UninitializedBuffer
from tensorlib.nn.parameter import UninitializedParameter as UninitializedParameter
# section 11.7: a convolution's backward as functions, torch.nn.grad (tensorlib.nn.grad), and
# PyTorch's type aliases for annotations (tensorlib.nn.common_types)
from tensorlib.nn import common_types as common_types
from tensorlib.nn import grad as grad
# section 11.6: adaptive softmax
from tensorlib.nn.modules import AdaptiveLogSoftmaxWithLoss as AdaptiveLogSoftmaxWithLoss
# section 11.5: lazy layers
from tensorlib.nn.modules import LazyBatchNorm1d as LazyBatchNorm1d
from tensorlib.nn.modules import LazyBatchNorm2d as LazyBatchNorm2d
from tensorlib.nn.modules import LazyBatchNorm3d as LazyBatchNorm3d
from tensorlib.nn.modules import LazyConv1d as LazyConv1d
from tensorlib.nn.modules import LazyConv2d as LazyConv2d
from tensorlib.nn.modules import LazyConv3d as LazyConv3d
from tensorlib.nn.modules import LazyConvTranspose1d as LazyConvTranspose1d
from tensorlib.nn.modules import LazyConvTranspose2d as LazyConvTranspose2d
from tensorlib.nn.modules import LazyConvTranspose3d as LazyConvTranspose3d
from tensorlib.nn.modules import LazyInstanceNorm1d as LazyInstanceNorm1d
from tensorlib.nn.modules import LazyInstanceNorm2d as LazyInstanceNorm2d
from tensorlib.nn.modules import LazyInstanceNorm3d as LazyInstanceNorm3d
from tensorlib.nn.modules import LazyLinear as LazyLinear
# section 11.8: PyTorch's older names, and the linear layer fused with its cross entropy
from tensorlib.nn.modules import Container as Container
from tensorlib.nn.modules import CrossMapLRN2d as CrossMapLRN2d
from tensorlib.nn.modules import LinearCrossEntropyLoss as LinearCrossEntropyLoss
from tensorlib.nn.modules import LinearCrossEntropyOptions as LinearCrossEntropyOptions
from tensorlib.nn.modules import NLLLoss2d as NLLLoss2d

# Chapter 5, Attention: recurrent layers, multi-head attention, Transformer layers
# (tensorlib.nn.modules.rnn, .attention, .transformer)
from tensorlib.nn.modules import GRU as GRU
from tensorlib.nn.modules import LSTM as LSTM
from tensorlib.nn.modules import GRUCell as GRUCell
from tensorlib.nn.modules import RNNBase as RNNBase
from tensorlib.nn.modules import RNNCellBase as RNNCellBase
from tensorlib.nn.modules import LSTMCell as LSTMCell
from tensorlib.nn.modules import MultiheadAttention as MultiheadAttention
from tensorlib.nn.modules import RNN as RNN
from tensorlib.nn.modules import RNNCell as RNNCell
from tensorlib.nn.modules import Transformer as Transformer
from tensorlib.nn.modules import TransformerDecoder as TransformerDecoder
from tensorlib.nn.modules import TransformerDecoderLayer as TransformerDecoderLayer
from tensorlib.nn.modules import TransformerEncoder as TransformerEncoder
from tensorlib.nn.modules import TransformerEncoderLayer as TransformerEncoderLayer
from tensorlib.nn.modules import init_forget_bias_ as init_forget_bias_

# Chapter 6, Optimizers: gradient clipping (tensorlib.nn.utils)
from tensorlib.nn import utils as utils
