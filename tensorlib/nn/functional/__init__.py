"""tensorlib.nn.functional: stateless functions of layers, activations and losses, like
torch.nn.functional.

Written by hand, re-exports only.
"""

# Chapter 2, Autograd: activations and losses (nn.functional.activation, nn.functional.loss)
from tensorlib.nn.functional.activation import gelu, log_softmax, relu, sigmoid, silu, softmax, tanh
from tensorlib.nn.functional.loss import gaussian_nll_loss, kl_div, l1_loss, poisson_nll_loss
from tensorlib.nn.functional.distance import (
    cdist, cosine_similarity, normalize, pairwise_distance, pdist,
)
from tensorlib.nn.functional.margin_loss import (
    cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss, multi_margin_loss,
    multilabel_soft_margin_loss, soft_margin_loss, triplet_margin_loss,
)
from tensorlib.nn.functional.activation import (
    celu, elu, glu, hardshrink, hardsigmoid, hardswish, hardtanh, leaky_relu, logsigmoid, mish,
    prelu, relu6, rrelu, selu, softmin, softplus, softshrink, softsign, tanhshrink, threshold,
)
from tensorlib.nn.functional.loss import (
    binary_cross_entropy_with_logits,
    cross_entropy,
    mse_loss,
    nll_loss,
)

# Chapter 4, Layers: linear, conv2d, dropout, pad, one_hot, ..., and LayerNormFunction, the kernel
# of layer_norm that a fused layer may call directly (nn.functional.layers)
# isort: split
from tensorlib.nn.functional.layers import (
    BatchNormFunction,
    LayerNormFunction,
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    batch_norm,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    dropout,
    dropout2d,
    embedding,
    group_norm,
    instance_norm,
    interpolate,
    layer_norm,
    linear,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    one_hot,
    pad,
    pixel_shuffle,
    pixel_unshuffle,
    rms_norm,
    unfold,
)
from tensorlib.nn.functional.elementwise_loss import (
    binary_cross_entropy, huber_loss, smooth_l1_loss,
)

__all__ = [
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "gelu",
    "log_softmax",
    "mse_loss",
    "nll_loss",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "tanh",
    "celu",
    "elu",
    "glu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "leaky_relu",
    "logsigmoid",
    "mish",
    "prelu",
    "relu6",
    "rrelu",
    "selu",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanhshrink",
    "threshold",
    "gaussian_nll_loss",
    "kl_div",
    "l1_loss",
    "poisson_nll_loss",
    "cdist",
    "cosine_similarity",
    "normalize",
    "pairwise_distance",
    "pdist",
    "cosine_embedding_loss",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "multi_margin_loss",
    "multilabel_soft_margin_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    # Chapter 4
    "BatchNormFunction",
    "LayerNormFunction",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_norm",
    "binary_cross_entropy",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "dropout",
    "dropout2d",
    "embedding",
    "group_norm",
    "instance_norm",
    "interpolate",
    "huber_loss",
    "layer_norm",
    "linear",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "one_hot",
    "pad",
    "pixel_shuffle",
    "pixel_unshuffle",
    "rms_norm",
    "smooth_l1_loss",
    "unfold",
    # Chapter 5
    "causal_mask",
    "online_softmax_attention",
    "scaled_dot_product_attention",
]

# Chapter 5, Attention: fused softmax attention, masks, online softmax (nn.functional.attention)
# isort: split
from tensorlib.nn.functional.attention import (
    causal_mask,
    online_softmax_attention,
    scaled_dot_product_attention,
)
