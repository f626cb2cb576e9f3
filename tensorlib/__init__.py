"""tensorlib: a deep learning library built from the tensor up, one chapter at a time.

The names PyTorch has at top level (``torch.tensor``, ``torch.zeros``, ``torch.no_grad``,
``torch.manual_seed``, ...) are here under the same names. This file is written by hand and
only re-exports: every definition lives in a module generated from a chapter of the book
(see the header of each module).
"""

# Chapter 1, Tensors: shape algebra (tensorlib.shape)
from tensorlib.shape import (
    Size, broadcast_shapes, sum_to_shape,
)

# Chapter 2, Autograd: Tensor, its ops and the engine (tensorlib.engine, tensorlib.autograd).
# dtype aliases as in torch: tl.float is float32, tl.int is int32, tl.half is float16, and tl.bool
# is numpy's bool_ (the names shadow Python's builtins only inside this namespace, as in torch).
from tensorlib.engine import (
    abs, add, allclose, amax, amin, arange, argmax, argmin, as_device, bitwise_and, bitwise_not,
    bitwise_or, bitwise_xor, bmm, bool_ as bool, cat, chunk, clamp, concat, cos, cuda, cumsum,
    device, div, double, empty, empty_like, enable_grad, eq, equal, exp, eye, flatten, float16,
    float16 as half, float32, float32 as float, float64, floor_divide, from_numpy, full, full_like,
    Function, gather, ge, gt, inf, int16, int32, int32 as int, int64, int8, is_grad_enabled,
    is_tensor, le, linspace, log, log1p, log_softmax, long, lt, masked_fill, matmul, max, maximum,
    mean, min, minimum, mul, nan, ne, neg, no_grad, norm, numel, ones, ones_like, outer, permute,
    pow, relu, remainder, reshape, rsqrt, set_grad_enabled, sigmoid, sin, softmax, sort, split,
    sqrt, square, squeeze, stack, std, sub, sum, tanh, Tensor, tensor, topk, transpose, tril, triu,
    uint8, unsqueeze, var, where, zeros, zeros_like,
)
from tensorlib.engine import (
    bfloat16, flip, get_default_device, get_num_threads, inference_mode, is_floating_point, mm,
    narrow, roll, set_default_device, set_num_threads,
)
from tensorlib.engine import (
    cdouble, cfloat, complex64, complex128, layout, strided, uint16, uint32, uint64,
)
from tensorlib.engine import (
    argsort, ceil, clip, count_nonzero, expm1, floor, isclose, isfinite, isinf, isnan, log2, log10,
    logical_and, logical_not, logical_or, logical_xor, logsumexp, nonzero, reciprocal, round, sign,
    signbit, trunc,
)
from tensorlib.engine import (
    acos, addcdiv, addcmul, arccos, arcsin, arctan, asin, atan, broadcast_tensors, broadcast_to,
    clamp_max, clamp_min, cosh, einsum, finfo, iinfo, index_select, lerp, masked_select, movedim,
    sinh,
    swapaxes, swapdims, tan, tile,
)
from tensorlib.engine import (
    diag, diagonal, meshgrid, repeat_interleave, scatter, scatter_add, trace,
)
from tensorlib.engine import (
    aminmax, bincount, bucketize, nan_to_num, prod, searchsorted, std_mean, tril_indices,
    triu_indices, unique, var_mean,
)
from tensorlib.engine import (
    addbmm, addmm, addmv, addr, atleast_1d, atleast_2d, atleast_3d, baddbmm, column_stack,
    concatenate, cumprod, diff, dot, dsplit, dstack, fliplr, flipud, hsplit, hstack, kron,
    kthvalue, median, mv, nanmean, nanmedian, nanquantile, nansum, quantile, ravel, rot90,
    row_stack, take, take_along_dim, tensor_split, tensordot, unbind, unflatten, vdot, vsplit,
    vstack,
)
from tensorlib.engine import can_cast, promote_types, result_type
from tensorlib.engine import (  # torch's names; detect_anomaly is in tl.autograd, as in torch
    is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled,
)
from tensorlib.engine import (
    block_diag, cartesian_prod, combinations, corrcoef, cov, cummax, cummin, cumulative_trapezoid,
    gcd, heaviside, histc, histogram, isin, lcm, ldexp, logspace, trapezoid, vander,
)
from tensorlib.engine import gradient, histogramdd
from tensorlib import special, testing  # tl.special (torch.special), tl.testing.assert_close
from tensorlib.engine import (
    as_tensor, clone, dtype, index_add, index_copy, index_fill, masked_scatter, neg as negative,
)
from tensorlib.engine import get_default_dtype, set_default_dtype, set_printoptions
from tensorlib.engine import (
    BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor,
    LongTensor, ShortTensor, e, pi,
)
from tensorlib.engine import (
    arctan2, atan2, copysign, deg2rad, erf, erfc, erfinv, exp2, float_power, fmax, fmin, fmod,
    frac, hypot, logaddexp, logaddexp2, logit, rad2deg, sinc, true_divide, xlogy,
)
from tensorlib.engine.linalg_ops import det, inverse, legacy_cross as cross, logdet, slogdet
from tensorlib.engine import digamma, lgamma, logcumsumexp, mode, msort, polygamma
from tensorlib.engine.special_ops import i0, mvlgamma
from tensorlib.engine.special_gamma import igamma, igammac
from tensorlib.engine.linalg_decomps import legacy_svd as svd, matrix_power, pinverse
from tensorlib.engine import (  # PyTorch's other names (book section 20.5)
    abs as absolute, ge as greater_equal, gt as greater, le as less_equal, lt as less,
    movedim as moveaxis, mul as multiply, ne as not_equal, outer as ger, sign as sgn,
    sub as subtract, trapezoid as trapz, trunc as fix,
)
from tensorlib.engine.arithmetic import all_nonzero as all, any_nonzero as any
from tensorlib.engine import (  # more of torch's top-level names (chapter 2, section 8)
    adjoint, argwhere, as_strided, asarray, deprecated_range as range, fill, frombuffer,
    index_reduce,
    get_num_interop_threads, is_inference_mode_enabled, is_storage, is_warn_always_enabled,
    scalar_tensor, set_default_tensor_type, set_num_interop_threads, set_warn_always, typename,
)
from tensorlib.engine.shape_ops import matrix_transpose as t
from tensorlib.engine import (  # the views as copies (chapter 2, section 20.6)
    alias_copy, as_strided_copy, detach_copy, diagonal_copy, empty_permuted, empty_strided,
    expand_copy, narrow_copy, nonzero_static, permute_copy, select_copy, slice_copy, split_copy,
    split_with_sizes_copy, squeeze_copy, t_copy, transpose_copy, unbind_copy, unfold_copy,
    unsafe_chunk, unsafe_split, unsafe_split_with_sizes, unsqueeze_copy, view_copy,
)
from tensorlib.engine import (
    acosh, arccosh, arcsinh, arctanh, asinh, atanh, bartlett_window, bitwise_left_shift,
    bitwise_right_shift, blackman_window, chain_matmul, cholesky_inverse, cholesky_solve, detach,
    diag_embed, diagflat, diagonal_scatter, dist, divide, frexp, hamming_window, hann_window,
    index_put, inner, is_complex, is_nonzero, is_same_size, is_signed, isneginf, isposinf,
    isreal, kaiser_window, nextafter, positive, renorm, rsub, scatter_reduce, select,
    select_scatter, slice_scatter, split_with_sizes, unique_consecutive, unravel_index,
)
from tensorlib.engine import (  # torch.relu_(x) is x.relu_()
    abs_, acos_, acosh_, addmv_, arccos_, arccosh_, arcsin_, arcsinh_, arctan_, arctanh_, asin_,
    asinh_, atan_, atanh_, ceil_, clamp_, clamp_max_, clamp_min_, clip_, cos_, cosh_, deg2rad_,
    detach_, erf_, erfc_, exp2_, exp_, expm1_, fill_, fix_, floor_, frac_, gcd_, index_put_,
    lcm_, ldexp_, log10_, log1p_, log2_, log_, logit_, nan_to_num_, neg_, negative_, rad2deg_,
    reciprocal_, relu_, round_, rsqrt_, sigmoid_, sin_, sinc_, sinh_, sqrt_, square_, tan_, tanh_,
    trunc_, xlogy_, zero_,
)
from tensorlib import linalg  # tl.linalg: det, inv, solve, norms, cholesky, eigh (torch.linalg)
from tensorlib.linalg import matrix_exp  # torch.matrix_exp is torch.linalg.matrix_exp
from tensorlib.linalg.more import (  # PyTorch's deprecated spellings (chapter 2, section 20.4)
    legacy_cholesky as cholesky, legacy_lu as lu, legacy_lu_solve as lu_solve, legacy_qr as qr,
    lu_unpack, triangular_solve,
)
from tensorlib.engine.linalg_norms import frobenius_norm, nuclear_norm  # deprecated, warn
from tensorlib import autograd, nn  # tl.autograd.grad/backward/gradcheck, tl.nn.functional
from tensorlib.nn.functional.distance import cdist, cosine_similarity, pairwise_distance, pdist
from tensorlib import func  # tl.func: vmap, grad, vjp, jacrev, jacfwd (torch.func)
from tensorlib.func import vmap

# Chapter 3, Initialization: random numbers (tensorlib.random)
from tensorlib.random import (
    bernoulli, default_generator, Generator, get_rng_state, initial_seed, manual_seed, multinomial,
    rand, rand_like, randint, randint_like, randn, randn_like, randperm, set_rng_state,
)
from tensorlib.random import (
    are_deterministic_algorithms_enabled, is_deterministic_algorithms_warn_only_enabled, normal,
    poisson, seed, use_deterministic_algorithms,
)
from tensorlib import distributions  # Categorical, Normal, Bernoulli (tl.distributions)

# Chapter 4, Layers: tl.utils.data (datasets, samplers, DataLoader), as torch.utils.data
from tensorlib import utils

# Chapter 4, Layers, section 11.7: the layers' functions at top level, with the signatures of
# PyTorch's operators (tensorlib.nn.functional.aten); where torch.NAME is torch.nn.functional.NAME,
# the functional form itself
from tensorlib.nn.functional.aten import (
    aten_adaptive_max_pool1d as adaptive_max_pool1d,
    aten_affine_grid_generator as affine_grid_generator,
    aten_alpha_dropout as alpha_dropout,
    aten_alpha_dropout_ as alpha_dropout_,
    aten_batch_norm as batch_norm,
    aten_binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
    aten_celu as celu,
    aten_constant_pad_nd as constant_pad_nd,
    aten_cosine_embedding_loss as cosine_embedding_loss,
    aten_ctc_loss as ctc_loss,
    aten_dropout as dropout,
    aten_dropout_ as dropout_,
    aten_embedding as embedding,
    aten_embedding_bag as embedding_bag,
    aten_feature_alpha_dropout as feature_alpha_dropout,
    aten_feature_alpha_dropout_ as feature_alpha_dropout_,
    aten_feature_dropout as feature_dropout,
    aten_feature_dropout_ as feature_dropout_,
    aten_grid_sampler as grid_sampler,
    aten_group_norm as group_norm,
    aten_hinge_embedding_loss as hinge_embedding_loss,
    aten_instance_norm as instance_norm,
    aten_kl_div as kl_div,
    aten_layer_norm as layer_norm,
    aten_margin_ranking_loss as margin_ranking_loss,
    aten_max_pool1d as max_pool1d,
    aten_max_pool1d_with_indices as max_pool1d_with_indices,
    aten_max_pool2d as max_pool2d,
    aten_max_pool3d as max_pool3d,
    aten_poisson_nll_loss as poisson_nll_loss,
    aten_rrelu as rrelu,
    aten_selu as selu,
    aten_threshold as threshold,
    aten_triplet_margin_loss as triplet_margin_loss,
    conv_tbc,
    convolution,
    embedding_renorm_,
    native_batch_norm,
    native_dropout,
    native_group_norm,
    native_layer_norm,
    norm_except_dim,
)
from tensorlib.nn.functional import (
    adaptive_avg_pool1d, avg_pool1d, bilinear, celu_, channel_shuffle, conv1d, conv2d, conv3d,
    conv_transpose1d, conv_transpose2d, conv_transpose3d, hardshrink, native_channel_shuffle,
    pixel_shuffle, pixel_unshuffle, prelu, rms_norm, rrelu_, selu_, threshold_,
)

# Chapter 5, Attention, section 1.7: the recurrent operators (tensorlib.nn.functional.aten_rnn)
from tensorlib.nn.functional.aten_rnn import (
    gru, gru_cell, lstm, lstm_cell, rnn_relu, rnn_relu_cell, rnn_tanh, rnn_tanh_cell,
)

# Chapter 6, Optimizers: tl.optim (optimizers, lr_scheduler) and tl.nn.utils (gradient clipping)
from tensorlib import optim

# Chapter 7, Checkpointing: tl.save/tl.load (torch.save's format; a default load runs no code);
# formats in tl.serialization
from tensorlib import serialization
from tensorlib.serialization import load, save

# Chapter 8, A GPT end to end: what PyTorch programs import at the top for GPUs and many processes,
# answered for one CPU process (tl.backends, tl.accelerator, tl.amp, tl.compiler, tl.distributed,
# tl.onnx; also tensorlib.nn.parallel, tensorlib.utils.tensorboard); tensorlib.run_as_torch runs
# PyTorch programs
from tensorlib import accelerator, amp, backends, compiler, distributed, onnx
from tensorlib.compiler import compile  # wraps a model that runs eagerly: no compiler
from tensorlib import jit  # script/trace return their argument, decorators their function
from tensorlib import fx, hub  # fx.wrap returns its argument; hub reads its cache only
from tensorlib import profiler  # torch.profiler: profile, record_function, schedule
# torch.autograd.profiler (the older profiler), reachable as tl.autograd.profiler without an import
import tensorlib.autograd.profiler as _autograd_profiler  # noqa: F401
from tensorlib.backends import get_float32_matmul_precision, set_float32_matmul_precision
from tensorlib.amp import (
    autocast, get_autocast_cpu_dtype, get_autocast_dtype, get_autocast_gpu_dtype,
    is_autocast_cpu_enabled, is_autocast_enabled,
)

__version__ = "0.1.0"
