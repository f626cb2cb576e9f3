"""tensorlib.engine: the Tensor, its reverse-mode autograd engine and every differentiable op
(chapter 2).

Written by hand, re-exports only. Each module is one idea of chapter 2, in the chapter's order:
grad mode and anomaly detection (``anomaly``, the other switch the engine reads), dtypes and
devices, ``Tensor`` (``tensor_type``: the class, whose methods call the op
modules), ``Function`` and the backward pass (``function``, with ``freeing`` and ``versions``),
creation functions, dtype promotion and conversion, the ops by topic, and the production concerns
(in-place changes, ``retain_grad``, numpy interop). ``tensor_type`` is imported first: it imports
the op modules at its bottom, once ``Tensor`` exists.
``from tensorlib.engine import Tensor, Function, no_grad, tensor, ...`` works for every public name.
"""

from tensorlib.engine.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from tensorlib.engine.anomaly import (
    detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled,
    set_detect_anomaly,
)
from tensorlib.engine.dtypes import (
    as_device, bool_, cuda, device, double, float16, float32, float64, inf, int8, int16, int32,
    int64, long, nan, parse_to, uint8,
)
from tensorlib.engine.tensor_type import Tensor, set_printoptions
from tensorlib.engine.function import Function, run_backward
from tensorlib.engine.creation import (
    arange, empty, empty_like, eye, from_numpy, full, full_like, is_tensor, linspace, numel, ones,
    ones_like, tensor, zeros, zeros_like,
)
from tensorlib.engine.conversion import Cast, Clone
from tensorlib.engine.arithmetic import (
    Add, Div, Mul, Neg, Pow, Sub, add, allclose, bitwise_and, bitwise_not, bitwise_or, bitwise_xor,
    div, eq, equal, floor_divide, ge, gt, le, lt, mul, ne, neg, pow, remainder, rsqrt, square,
    sub,
)
from tensorlib.engine.arithmetic import (
    count_nonzero, isclose, isfinite, isinf, isnan, logical_and, logical_not, logical_or,
    logical_xor, nonzero, reciprocal, signbit,
)
from tensorlib.engine.reductions import (
    ElementwiseExtremum, Extremum, ExtremumAlongDim, Mean, Norm, Sort, Std, Sum, Var, Cumsum, amax,
    amin, argmax, argmin, cumsum, max, maximum, mean, min, minimum, norm, sort, std, sum, topk, var,
)
from tensorlib.engine.out_arg import supports_out, supports_out_creation, write_out
from tensorlib.engine.more_reductions import Prod, aminmax, prod, std_mean, var_mean
from tensorlib.engine.reductions import argsort
from tensorlib.engine.matmul_ops import Einsum, MatMul, bmm, einsum, matmul, outer
from tensorlib.engine.selection import MaskedFill, Where, masked_fill, tril, triu, where
from tensorlib.engine.elementwise import (
    Abs, Clamp, Cos, Exp, Log, Log1p, Relu, Sigmoid, Sin, Sqrt, Tanh, abs, clamp, cos, exp, log,
    log1p, relu, sigmoid, sin, sqrt, tanh,
)
from tensorlib.engine.elementwise import (
    Expm1, LogBase, PiecewiseConstant, ceil, clip, expm1, floor, log2, log10, round, sign, trunc,
)
from tensorlib.engine.elementwise import (
    Acos, Asin, Atan, Cosh, Sinh, Tan, acos, arccos, arcsin, arctan, asin, atan, clamp_max,
    clamp_min, cosh, sinh, tan,
)
from tensorlib.engine.arithmetic import addcdiv, addcmul, lerp
from tensorlib.engine.arithmetic import (
    bincount, bucketize, searchsorted, tril_indices, triu_indices, unique,
)
from tensorlib.engine.elementwise import nan_to_num
from tensorlib.engine.shape_ops import (
    broadcast_tensors, broadcast_to, movedim, swapaxes, swapdims, tile,
)
from tensorlib.engine.indexing import (
    diag, diagonal, index_select, masked_select, meshgrid, repeat_interleave, trace,
)
from tensorlib.engine.indexing import Scatter, scatter, scatter_add
from tensorlib.engine.dtypes import finfo, iinfo
from tensorlib.engine.softmax_ops import (
    LogSoftmax, LogSumExp, Softmax, log_softmax, logsumexp, softmax,
)
from tensorlib.engine.parallel import get_num_threads, parallel_for, set_num_threads
from tensorlib.engine.shape_ops import (
    Expand, Permute, Repeat, Reshape, expand, flatten, permute, repeat, reshape, squeeze, transpose,
    unsqueeze,
)
from tensorlib.engine.indexing import Gather, Index, gather
from tensorlib.engine.joining import Cat, Stack, cat, chunk, concat, split, stack
from tensorlib.engine.grad_mode import inference_mode
from tensorlib.engine.dtypes import bfloat16, get_default_device, set_default_device
from tensorlib.engine.creation import is_floating_point
from tensorlib.engine.matmul_ops import mm
from tensorlib.engine.shape_ops import Flip, Roll, flip, roll
from tensorlib.engine.indexing import narrow
from tensorlib.engine.cumulative import Cumprod, cumprod
from tensorlib.engine.matmul_ops import (
    addbmm, addmm, addmv, addr, baddbmm, dot, kron, mv, tensordot, vdot,
)
from tensorlib.engine.shape_ops import fliplr, flipud, ravel, rot90, unflatten
from tensorlib.engine.indexing import take, take_along_dim
from tensorlib.engine.joining import (
    atleast_1d, atleast_2d, atleast_3d, column_stack, concatenate, diff, dsplit, dstack, hsplit,
    hstack, row_stack, tensor_split, unbind, vsplit, vstack,
)
from tensorlib.engine.pairwise_ops import (
    Atan2, Copysign, FloatingExtremum, Fmod, Hypot, LogAddExp, arctan2, atan2, copysign,
    float_power, fmax, fmin, fmod, hypot, logaddexp, logaddexp2, true_divide,
)
from tensorlib.engine.special_ops import (
    Erf, Erfinv, Sinc, Xlogy, deg2rad, erf, erfc, erfinv, exp2, frac, logit, rad2deg, sinc, xlogy,
)
from tensorlib.engine.indexing import index_add, index_copy, index_fill, masked_scatter
from tensorlib.engine.creation import as_tensor
from tensorlib.engine.conversion import clone
from tensorlib.engine.dtypes import dtype, get_default_dtype, set_default_dtype
from tensorlib.engine.hooks import RemovableHandle
from tensorlib.engine.promotion import can_cast, promote_types, result_type
from tensorlib.engine.special_ops import entr, ndtr, ndtri, xlog1py
from tensorlib.engine.histograms import heaviside, histc, histogram, isin
from tensorlib.engine.division import gcd, lcm
from tensorlib.engine.statistics import histogramdd
from tensorlib.engine.creation import logspace
from tensorlib.engine.creation import (
    BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor,
    LegacyTensorType, LongTensor, ShortTensor,
)
from tensorlib.engine.dtypes import e, pi
from tensorlib.engine.shape_ops import Unfold
from tensorlib.engine.pairwise_ops import ldexp
from tensorlib.engine.joining import block_diag, cartesian_prod, combinations, vander
from tensorlib.engine.statistics import (
    corrcoef, cov, cummax, cummin, cumulative_trapezoid, gradient, trapezoid,
)
from tensorlib.engine.statistics import (
    kthvalue, median, nanmean, nanmedian, nanquantile, nansum, quantile,
)
from tensorlib.engine.cumulative import LogCumSumExp, logcumsumexp
from tensorlib.engine.special_ops import Lgamma, Polygamma, digamma, lgamma, polygamma
from tensorlib.engine.special_ops import (
    BesselI, Erfcx, LogNdtr, erfcx, i0, i0e, i1, i1e, log_ndtr, multigammaln, mvlgamma,
)
from tensorlib.engine.special_gamma import (
    Igamma, Zeta, gammainc, gammaincc, igamma, igammac, zeta,
)
from tensorlib.engine.special_bessel import (
    airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, modified_bessel_i0, modified_bessel_i1,
    modified_bessel_k0, modified_bessel_k1, scaled_modified_bessel_k0, scaled_modified_bessel_k1,
    spherical_bessel_j0,
)
from tensorlib.engine.special_polynomials import (
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w,
    hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l, legendre_polynomial_p,
    shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)
from tensorlib.engine.statistics import mode, msort

from tensorlib.engine.more_ops import (
    Acosh, Asinh, Atanh, acosh, arccosh, arcsinh, arctanh, asinh, atanh, bartlett_window,
    bitwise_left_shift, bitwise_right_shift, blackman_window, chain_matmul, cholesky_inverse,
    cholesky_solve, detach, diagflat, dist, divide, frexp, hamming_window, hann_window, inner,
    is_complex, is_nonzero, is_same_size, is_signed, isneginf, isposinf, isreal, kaiser_window,
    nextafter, positive, renorm, rsub, select, split_with_sizes, sum_to_size, unique_consecutive,
    unravel_index,
)
from tensorlib.engine.more_ops import (  # torch.relu_(x) is x.relu_()
    abs_, acos_, acosh_, addmv_, arccos_, arccosh_, arcsin_, arcsinh_, arctan_, arctanh_, asin_,
    asinh_, atan_, atanh_, ceil_, clamp_max_, clamp_min_, clip_, cos_, cosh_, deg2rad_, erf_,
    erfc_, exp2_, exp_, expm1_, fix_, floor_, frac_, gcd_, index_put_, lcm_, ldexp_, log10_,
    log1p_, log2_, log_, logit_, nan_to_num_, neg_, negative_, rad2deg_, reciprocal_, relu_,
    round_, rsqrt_, sigmoid_, sin_, sinc_, sinh_, sqrt_, square_, tan_, tanh_, trunc_, xlogy_,
)
from tensorlib.engine.scatter_ops import (
    ScatterReduce, WriteInto, diag_embed, diagonal_scatter, index_put, scatter_reduce,
    select_scatter, slice_scatter,
)
from tensorlib.engine.inplace import clamp_, fill_, zero_
from tensorlib.engine.retain_grad import detach_
from tensorlib.engine.dtypes import (
    cdouble, cfloat, complex64, complex128, layout, strided, uint16, uint32, uint64,
)

from tensorlib.engine.creation import (
    asarray, deprecated_range, fill, frombuffer, is_storage, is_warn_always_enabled,
    scalar_tensor, set_default_tensor_type, set_warn_always, typename,
)
from tensorlib.engine.grad_mode import is_inference_mode_enabled
from tensorlib.engine.parallel import get_num_interop_threads, set_num_interop_threads
from tensorlib.engine.more_ops import AsStrided, adjoint, argwhere, as_strided
from tensorlib.engine.scatter_ops import index_reduce
from tensorlib.engine.inplace import fill_diagonal_
from tensorlib.engine.view_copies import (
    alias_copy, as_strided_copy, detach_copy, diagonal_copy, empty_permuted, empty_strided,
    expand_copy, narrow_copy, nonzero_static, permute_copy, select_copy, slice_copy, split_copy,
    split_with_sizes_copy, squeeze_copy, t_copy, transpose_copy, unbind_copy, unfold_copy,
    unsafe_chunk, unsafe_split, unsafe_split_with_sizes, unsqueeze_copy, view_copy,
)
from tensorlib.engine.division import NoDerivative, Remainder, RoundedQuotient
from tensorlib.engine.creation import Fill
from tensorlib.engine.more_ops import Mantissa, NextAfter

__all__ = [
    "enable_grad", "is_grad_enabled", "no_grad", "set_grad_enabled",
    "detect_anomaly", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "set_anomaly_enabled",
    "set_detect_anomaly",
    "as_device", "bool_", "cuda", "device", "double", "float16", "float32", "float64", "inf",
    "int8", "int16", "int32", "int64", "long", "nan", "parse_to", "uint8",
    "Tensor", "set_printoptions", "Function", "run_backward",
    "arange", "empty", "empty_like", "eye", "from_numpy", "full", "full_like", "is_tensor",
    "linspace", "numel", "ones", "ones_like", "tensor", "zeros", "zeros_like",
    "Cast", "Clone",
    "count_nonzero", "isclose", "isfinite", "isinf", "isnan", "logical_and", "logical_not",
    "logical_or", "logical_xor", "nonzero", "reciprocal", "signbit", "argsort",
    "Expm1", "LogBase", "PiecewiseConstant", "ceil", "clip", "expm1", "floor", "log2", "log10",
    "round", "sign", "trunc", "LogSumExp", "logsumexp",
    "Acos", "Asin", "Atan", "Cosh", "Sinh", "Tan", "acos", "arccos", "arcsin", "arctan", "asin",
    "atan", "clamp_max", "clamp_min", "cosh", "sinh", "tan", "addcdiv", "addcmul", "lerp",
    "broadcast_tensors", "broadcast_to", "movedim", "swapaxes", "swapdims", "tile",
    "index_select", "masked_select", "finfo", "iinfo", "diag", "diagonal", "meshgrid",
    "repeat_interleave", "trace", "Prod", "aminmax", "prod", "std_mean", "var_mean", "bincount",
    "bucketize", "searchsorted", "tril_indices", "triu_indices", "unique", "nan_to_num",
    "Scatter", "scatter", "scatter_add",
    "Add", "Div", "Mul", "Neg", "Pow", "Sub", "add", "allclose", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "div", "eq", "equal", "floor_divide", "ge", "gt", "le", "lt",
    "mul", "ne", "neg", "pow", "remainder", "rsqrt", "square", "sub",
    "ElementwiseExtremum", "Extremum", "ExtremumAlongDim", "Mean", "Norm", "Sort", "Std", "Sum",
    "Var", "Cumsum", "amax", "amin", "argmax", "argmin", "cumsum", "max", "maximum", "mean", "min",
    "minimum", "norm", "sort", "std", "sum", "topk", "var",
    "Einsum", "MatMul", "bmm", "einsum", "matmul", "outer",
    "get_num_threads", "parallel_for", "set_num_threads",
    "MaskedFill", "Where", "masked_fill", "tril", "triu", "where",
    "Abs", "Clamp", "Cos", "Exp", "Log", "Log1p", "Relu", "Sigmoid", "Sin", "Sqrt", "Tanh", "abs",
    "clamp", "cos", "exp", "log", "log1p", "relu", "sigmoid", "sin", "sqrt", "tanh",
    "LogSoftmax", "Softmax", "log_softmax", "softmax",
    "Expand", "Permute", "Repeat", "Reshape", "expand", "flatten", "permute", "repeat", "reshape",
    "squeeze", "transpose", "unsqueeze",
    "Gather", "Index", "gather",
    "Cat", "Stack", "cat", "chunk", "concat", "split", "stack",
    "cdouble", "cfloat", "complex64", "complex128", "layout", "strided", "uint16", "uint32",
    "uint64",
    "inference_mode", "bfloat16", "get_default_device", "set_default_device", "is_floating_point",
    "mm",
    "Flip", "Roll", "flip", "roll", "narrow",
    "Cumprod", "cumprod",
    "addbmm", "addmm", "addmv", "addr", "baddbmm", "dot", "kron", "mv", "tensordot", "vdot",
    "fliplr", "flipud", "ravel", "rot90", "unflatten", "take", "take_along_dim",
    "atleast_1d", "atleast_2d", "atleast_3d", "column_stack", "concatenate", "diff", "dsplit",
    "dstack", "hsplit", "hstack", "row_stack", "tensor_split", "unbind", "vsplit", "vstack",
    "kthvalue", "median", "nanmean", "nanmedian", "nanquantile", "nansum", "quantile",
    "Atan2", "Copysign", "Erf", "Erfinv", "FloatingExtremum", "Fmod", "Hypot", "LogAddExp", "Sinc",
    "Xlogy", "arctan2", "atan2", "copysign", "deg2rad", "erf", "erfc", "erfinv", "exp2",
    "float_power", "fmax", "fmin", "fmod", "frac", "hypot", "logaddexp", "logaddexp2", "logit",
    "rad2deg", "sinc", "true_divide", "xlogy",
    "index_add", "index_copy", "index_fill", "masked_scatter", "as_tensor", "clone", "dtype",
    "get_default_dtype", "set_default_dtype",
    "RemovableHandle", "can_cast", "promote_types", "result_type", "entr", "ndtr", "ndtri",
    "xlog1py", "gcd", "heaviside", "histc", "histogram", "histogramdd", "gradient", "isin", "lcm",
    "logspace", "ldexp",
    "block_diag", "cartesian_prod", "combinations", "vander", "corrcoef", "cov", "cummax",
    "cummin", "cumulative_trapezoid", "trapezoid", "BoolTensor", "ByteTensor", "CharTensor",
    "DoubleTensor", "FloatTensor", "HalfTensor", "IntTensor", "LegacyTensorType", "LongTensor",
    "ShortTensor", "e", "pi", "Unfold",
    "LogCumSumExp", "logcumsumexp", "Lgamma", "Polygamma", "digamma", "lgamma", "polygamma",
    "BesselI", "Erfcx", "LogNdtr", "erfcx", "i0", "i0e", "i1", "i1e", "log_ndtr",
    "multigammaln", "mvlgamma",
    "Igamma", "Zeta", "gammainc", "gammaincc", "igamma", "igammac", "zeta",
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "spherical_bessel_j0",
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "mode", "msort",
    "Acosh", "Asinh", "Atanh", "acosh", "arccosh", "arcsinh", "arctanh", "asinh", "atanh",
    "bartlett_window", "bitwise_left_shift", "bitwise_right_shift", "blackman_window",
    "chain_matmul", "cholesky_inverse", "cholesky_solve", "detach", "diagflat", "dist",
    "divide", "frexp", "hamming_window", "hann_window", "inner", "is_complex", "is_nonzero",
    "is_same_size", "is_signed", "isneginf", "isposinf", "isreal", "kaiser_window", "nextafter",
    "positive", "renorm", "rsub", "select", "split_with_sizes", "sum_to_size",
    "unique_consecutive", "unravel_index", "abs_", "acos_", "acosh_", "addmv_", "arccos_",
    "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_", "asinh_", "atan_",
    "atanh_", "ceil_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "erf_",
    "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "gcd_", "index_put_", "lcm_",
    "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_",
    "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_",
    "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "ScatterReduce",
    "WriteInto", "diag_embed", "diagonal_scatter", "index_put", "scatter_reduce",
    "select_scatter", "slice_scatter", "clamp_", "fill_", "zero_", "detach_",
    "asarray", "deprecated_range", "fill", "frombuffer", "is_storage", "is_warn_always_enabled",
    "scalar_tensor", "set_default_tensor_type", "set_warn_always", "typename",
    "is_inference_mode_enabled", "get_num_interop_threads", "set_num_interop_threads",
    "adjoint", "argwhere", "fill_diagonal_", "AsStrided", "as_strided", "index_reduce",
    "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "empty_permuted",
    "empty_strided", "expand_copy", "narrow_copy", "nonzero_static", "permute_copy",
    "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy",
    "t_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsafe_chunk", "unsafe_split",
    "unsafe_split_with_sizes", "unsqueeze_copy", "view_copy",
    "NoDerivative", "Remainder", "RoundedQuotient", "Fill", "Mantissa", "NextAfter",
    "supports_out", "supports_out_creation", "write_out",
]
