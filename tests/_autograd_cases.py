"""Shared cases for the chapter 2 autograd tests (gradcheck and PyTorch parity).

An :class:`OpCase` describes one differentiable op once, for both libraries: its ``fn`` takes
the library module (``tensorlib`` or ``torch``) and the input tensors, and calls only names the
two share (``x.exp()``, ``lib.cat``, ``lib.nn.functional.cross_entropy``, ...). Constant,
non-differentiable arguments (indices, masks, class targets) are built inside ``fn`` with
``lib.tensor(numpy_array)`` so both libraries see the same values.

The inputs of a case are drawn from a seeded generator, inside a domain that keeps central
differences away from kinks and poles (``positive`` for log and sqrt, ``nonzero`` for abs, relu
and division, ...), so a failing gradcheck means a wrong backward, not a finite-difference
artefact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

Shape = tuple[int, ...]


# ---------------------------------------------------------------------------------------------
# Input domains
# ---------------------------------------------------------------------------------------------


def _real(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    return rng.normal(size=shape)


def _positive(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    return rng.uniform(0.5, 2.0, size=shape)


def _nonzero(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    # |x| >= 0.3: far from the kink of abs/relu and from the pole of 1/x
    sign = np.where(rng.random(size=shape) < 0.5, -1.0, 1.0)
    return sign * rng.uniform(0.3, 1.5, size=shape)


def _unit(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    return rng.uniform(0.05, 0.95, size=shape)


def _off_clamp(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    # values in [-1, 1] at least 0.05 away from the clamp bounds -0.5 and 0.5
    x = rng.uniform(-1.0, 1.0, size=shape)
    near = np.abs(np.abs(x) - 0.5) < 0.05
    return np.where(near, x + 0.1 * np.sign(x), x)


def _distinct(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    # a random permutation, scaled: max/min never tie, and ties are at least 0.1 apart
    n = int(np.prod(shape, dtype=np.int64))
    return (rng.permutation(n).astype(np.float64) * 0.1 - 0.05 * n).reshape(shape)


DOMAINS: dict[str, Callable[[np.random.Generator, Shape], np.ndarray]] = {
    "real": _real,
    "positive": _positive,
    "nonzero": _nonzero,
    "unit": _unit,
    "off_clamp": _off_clamp,
    "distinct": _distinct,
}


def sample(domain: str, shape: Shape, seed: int) -> np.ndarray:
    """A float64 array of ``shape`` drawn from ``domain`` with ``seed``."""
    return np.asarray(DOMAINS[domain](np.random.default_rng(seed), tuple(shape)), dtype=np.float64)


def cotangent(shape: Shape) -> np.ndarray:
    """A fixed random float64 array of ``shape``: the upstream gradient used to scalarise outputs.

    Seeded by the shape, so the same output shape gets the same weights in every library.
    """
    return np.random.default_rng([20_26, len(shape), *shape]).normal(size=shape)


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpCase:
    """One op under test.

    Attributes:
        name: test id.
        fn: ``fn(lib, *inputs)`` returns a tensor or a tuple of tensors (integer ones are
            compared but not differentiated).
        shapes: shapes of the inputs.
        domains: one domain name per input (or one for all).
        grad: which inputs require grad (default: all).
    """

    name: str
    fn: Callable
    shapes: Sequence[Shape]
    domains: Sequence[str] | str = "real"
    grad: Sequence[bool] | None = None
    tags: frozenset[str] = field(default_factory=frozenset)

    def domain(self, i: int) -> str:
        return self.domains if isinstance(self.domains, str) else self.domains[i]

    def requires_grad(self, i: int) -> bool:
        return True if self.grad is None else bool(self.grad[i])

    def arrays(self, seed: int = 0) -> list[np.ndarray]:
        return [sample(self.domain(i), s, seed + 101 * i) for i, s in enumerate(self.shapes)]


def F(lib):
    """``lib.nn.functional`` for tensorlib or torch."""
    return lib.nn.functional


def _c(lib, array) -> object:
    """A constant (non-differentiable) tensor of ``lib`` from a numpy array."""
    return lib.tensor(np.asarray(array))


IDX_REPEATED = np.array([0, 2, 0, 0, 3])  # repeated rows: backward must scatter-add
MASK_3x4 = np.array(
    [[True, False, True, True], [False, False, True, False], [True, True, False, False]]
)
TARGET_4 = np.array([0, 2, 1, 2])
TARGET_IGNORE = np.array([0, -100, 1, 2])
TARGET_IGNORE_3 = np.array([0, 3, 1, 3])

CASES: list[OpCase] = [
    # -- arithmetic with broadcasting, and reflected forms
    OpCase("add", lambda lib, x, y: x + y, [(3, 1, 4), (2, 1)]),
    OpCase("sub", lambda lib, x, y: x - y, [(3, 4), (4,)]),
    OpCase("mul", lambda lib, x, y: x * y, [(2, 3, 1), (3, 4)]),
    OpCase("div", lambda lib, x, y: x / y, [(3, 4), (3, 1)], ["real", "nonzero"]),
    OpCase("pow_tensor", lambda lib, x, y: x**y, [(3, 4), (4,)], ["positive", "real"]),
    OpCase("pow_scalar_int", lambda lib, x: x**3, [(3, 4)]),
    OpCase("pow_scalar_half", lambda lib, x: x**0.5, [(3, 4)], "positive"),
    OpCase("pow_scalar_neg", lambda lib, x: x**-1.5, [(3, 4)], "positive"),
    OpCase("radd", lambda lib, x: 2.0 + x, [(3, 4)]),
    OpCase("rsub", lambda lib, x: 2.0 - x, [(3, 4)]),
    OpCase("rmul", lambda lib, x: 3.0 * x, [(3, 4)]),
    OpCase("rdiv", lambda lib, x: 2.0 / x, [(3, 4)], "nonzero"),
    OpCase("rpow", lambda lib, x: 2.0**x, [(3, 4)]),
    OpCase("neg", lambda lib, x: -x, [(3, 4)]),
    OpCase("scalar_tensor_mul", lambda lib, x, y: x * y, [(), (3, 4)]),
    # -- matmul, torch's semantics for 1-D and batched operands
    OpCase("matmul_2d", lambda lib, x, y: x @ y, [(3, 4), (4, 5)]),
    OpCase("matmul_batched_broadcast", lambda lib, x, y: x @ y, [(2, 1, 3, 4), (3, 4, 2)]),
    OpCase("matmul_vec_mat", lambda lib, x, y: x @ y, [(4,), (4, 3)]),
    OpCase("matmul_mat_vec", lambda lib, x, y: x @ y, [(3, 4), (4,)]),
    OpCase("matmul_vec_vec", lambda lib, x, y: x @ y, [(4,), (4,)]),
    OpCase("matmul_batched_vec", lambda lib, x, y: x @ y, [(2, 3, 4), (4,)]),
    # -- elementwise unary
    OpCase("exp", lambda lib, x: x.exp(), [(3, 4)]),
    OpCase("log", lambda lib, x: x.log(), [(3, 4)], "positive"),
    OpCase("sqrt", lambda lib, x: x.sqrt(), [(3, 4)], "positive"),
    OpCase("abs", lambda lib, x: x.abs(), [(3, 4)], "nonzero"),
    OpCase("tanh", lambda lib, x: x.tanh(), [(3, 4)]),
    OpCase("sigmoid", lambda lib, x: x.sigmoid(), [(3, 4)]),
    OpCase("relu", lambda lib, x: x.relu(), [(3, 4)], "nonzero"),
    OpCase("F.relu", lambda lib, x: F(lib).relu(x), [(3, 4)], "nonzero"),
    OpCase("F.sigmoid", lambda lib, x: F(lib).sigmoid(x), [(3, 4)]),
    OpCase("F.tanh", lambda lib, x: F(lib).tanh(x), [(3, 4)]),
    OpCase("F.gelu", lambda lib, x: F(lib).gelu(x), [(3, 4)]),
    OpCase("F.gelu_tanh", lambda lib, x: F(lib).gelu(x, approximate="tanh"), [(3, 4)]),
    OpCase("F.silu", lambda lib, x: F(lib).silu(x), [(3, 4)]),
    OpCase("clamp", lambda lib, x: x.clamp(-0.5, 0.5), [(3, 4)], "off_clamp"),
    OpCase("clamp_min", lambda lib, x: x.clamp(min=-0.5), [(3, 4)], "off_clamp"),
    OpCase("clamp_max", lambda lib, x: x.clamp(max=0.5), [(3, 4)], "off_clamp"),
    OpCase("clamp_tensor_bounds", lambda lib, x, lo: x.clamp(min=lo, max=lo + 1.0), [(3, 4), (4,)]),
    OpCase("maximum", lambda lib, x, y: lib.maximum(x, y), [(3, 4), (4,)]),
    OpCase("minimum", lambda lib, x, y: lib.minimum(x, y), [(3, 4), (3, 1)]),
    OpCase("max_of_two_tensors", lambda lib, x, y: lib.max(x, y), [(3, 4), (3, 4)]),
    OpCase("min_of_two_tensors", lambda lib, x, y: x.min(y), [(3, 4), (3, 4)]),
    # -- reductions
    OpCase("sum", lambda lib, x: x.sum(), [(3, 4)]),
    OpCase("sum_dim", lambda lib, x: x.sum(dim=1), [(2, 3, 4)]),
    OpCase("sum_dim_neg_keepdim", lambda lib, x: x.sum(dim=-1, keepdim=True), [(2, 3, 4)]),
    OpCase("sum_dims_tuple", lambda lib, x: x.sum(dim=(0, 2)), [(2, 3, 4)]),
    OpCase("mean", lambda lib, x: x.mean(), [(3, 4)]),
    OpCase("mean_dim_keepdim", lambda lib, x: x.mean(dim=0, keepdim=True), [(3, 4)]),
    OpCase("mean_dim_neg", lambda lib, x: x.mean(dim=-2), [(2, 3, 4)]),
    OpCase("var", lambda lib, x: x.var(), [(3, 4)]),
    OpCase("var_dim", lambda lib, x: x.var(dim=1), [(3, 4)]),
    OpCase("var_dim_neg_keepdim", lambda lib, x: x.var(dim=-1, keepdim=True), [(2, 3, 4)]),
    OpCase("sum_empty_dims_reduces_all", lambda lib, x: x.sum(dim=()), [(3, 4)]),
    OpCase("mean_empty_dims_reduces_all", lambda lib, x: x.mean(dim=()), [(3, 4)]),
    # torch 2.13's var(dim=()) reduces every dim forward but divides by N - 1 = 0 in backward
    # (inf gradients); ours is the gradient of var() over all dims, checked by gradcheck
    OpCase(
        "var_empty_dims_reduces_all",
        lambda lib, x: x.var(dim=()),
        [(3, 4)],
        tags=frozenset({"forward_parity_only"}),
    ),
    OpCase("amax_empty_dims_reduces_all", lambda lib, x: x.amax(dim=()), [(3, 4)], "distinct"),
    OpCase("max", lambda lib, x: x.max(), [(3, 4)], "distinct"),
    OpCase("min", lambda lib, x: x.min(), [(3, 4)], "distinct"),
    OpCase("max_dim", lambda lib, x: x.max(dim=1), [(3, 4)], "distinct"),
    OpCase(
        "max_dim_neg_keepdim", lambda lib, x: x.max(dim=-1, keepdim=True), [(2, 3, 4)], "distinct"
    ),
    OpCase("min_dim", lambda lib, x: x.min(dim=0), [(3, 4)], "distinct"),
    OpCase("softmax", lambda lib, x: x.softmax(dim=-1), [(3, 4)]),
    OpCase("softmax_dim0", lambda lib, x: x.softmax(dim=0), [(3, 4)]),
    OpCase("log_softmax", lambda lib, x: x.log_softmax(dim=-1), [(3, 4)]),
    OpCase("log_softmax_dim1_3d", lambda lib, x: x.log_softmax(dim=1), [(2, 3, 4)]),
    OpCase("F.softmax", lambda lib, x: F(lib).softmax(x, dim=1), [(3, 4)]),
    OpCase("F.log_softmax", lambda lib, x: F(lib).log_softmax(x, dim=1), [(3, 4)]),
    # -- shape ops
    OpCase("reshape", lambda lib, x: x.reshape(4, 3), [(3, 4)]),
    OpCase("reshape_minus1", lambda lib, x: x.reshape(-1, 2), [(3, 4)]),
    OpCase("view", lambda lib, x: x.view(2, 6), [(3, 4)]),
    OpCase("transpose", lambda lib, x: x.transpose(0, 2), [(2, 3, 4)]),
    OpCase("transpose_neg", lambda lib, x: x.transpose(-1, -2), [(2, 3, 4)]),
    OpCase("T", lambda lib, x: x.T, [(3, 4)]),
    OpCase("permute", lambda lib, x: x.permute(2, 0, 1), [(2, 3, 4)]),
    OpCase("unsqueeze", lambda lib, x: x.unsqueeze(1), [(3, 4)]),
    OpCase("unsqueeze_neg", lambda lib, x: x.unsqueeze(-1), [(3, 4)]),
    OpCase("squeeze", lambda lib, x: x.squeeze(), [(3, 1, 4, 1)]),
    OpCase("squeeze_dim", lambda lib, x: x.squeeze(1), [(3, 1, 4)]),
    OpCase("flatten", lambda lib, x: x.flatten(), [(2, 3, 4)]),
    OpCase("flatten_start", lambda lib, x: x.flatten(1), [(2, 3, 4)]),
    OpCase("expand", lambda lib, x: x.expand(2, 3, 4), [(3, 1)]),
    OpCase("expand_minus1", lambda lib, x: x.expand(-1, 4), [(3, 1)]),
    OpCase("squeeze_dim_not_one", lambda lib, x: x.squeeze(0), [(3, 4)]),
    OpCase("flatten_range", lambda lib, x: x.flatten(0, 1), [(2, 3, 4)]),
    OpCase("permute_negative", lambda lib, x: x.permute(-1, 0, 1), [(2, 3, 4)]),
    OpCase("reshape_tuple", lambda lib, x: x.reshape((4, 3)), [(3, 4)]),
    OpCase("view_minus1", lambda lib, x: x.view(-1), [(3, 4)]),
    OpCase("sum_0d", lambda lib, x: x.sum(), [()]),
    OpCase("softmax_1d", lambda lib, x: x.softmax(dim=0), [(5,)]),
    # -- indexing
    OpCase("getitem_int", lambda lib, x: x[1], [(3, 4)]),
    OpCase("getitem_neg_int", lambda lib, x: x[-1, 2], [(3, 4)]),
    OpCase("getitem_slice", lambda lib, x: x[:, 1:3], [(3, 4)]),
    OpCase("getitem_step", lambda lib, x: x[::2, 1:], [(5, 4)]),
    OpCase("getitem_none_ellipsis", lambda lib, x: x[None, ..., 0], [(2, 3, 4)]),
    OpCase("getitem_int_tensor_repeated", lambda lib, x: x[_c(lib, IDX_REPEATED)], [(4, 3)]),
    OpCase(
        "getitem_two_int_tensors",
        lambda lib, x: x[_c(lib, [0, 2, 2, 1]), _c(lib, [1, 3, 3, 0])],
        [(3, 4)],
    ),
    OpCase("getitem_bool_mask", lambda lib, x: x[_c(lib, MASK_3x4)], [(3, 4)]),
    OpCase("getitem_row_mask", lambda lib, x: x[_c(lib, np.array([True, False, True]))], [(3, 4)]),
    OpCase("getitem_negative_indices", lambda lib, x: x[_c(lib, [-1, 0, -1])], [(3, 4)]),
    OpCase("getitem_slice_and_array", lambda lib, x: x[1:, _c(lib, [3, 0, 3])], [(3, 4)]),
    OpCase("getitem_list", lambda lib, x: x[[0, 2, 0]], [(3, 4)]),
    OpCase("getitem_2d_mask_of_3d", lambda lib, x: x[_c(lib, MASK_3x4[:2, :3])], [(2, 3, 2)]),
    # -- joining and splitting
    OpCase("cat", lambda lib, x, y: lib.cat([x, y], dim=0), [(2, 3), (4, 3)]),
    OpCase("cat_neg_dim", lambda lib, x, y: lib.cat([x, y], dim=-1), [(2, 3), (2, 1)]),
    OpCase("stack", lambda lib, x, y: lib.stack([x, y]), [(2, 3), (2, 3)]),
    OpCase("stack_dim_neg", lambda lib, x, y: lib.stack([x, y], dim=-1), [(2, 3), (2, 3)]),
    OpCase("split_size", lambda lib, x: lib.split(x, 2, dim=1), [(3, 5)]),
    OpCase("split_sections", lambda lib, x: lib.split(x, [1, 2], dim=0), [(3, 4)]),
    OpCase(
        "cat_three_one_constant",
        lambda lib, x, y: lib.cat([x, y, x], dim=1),
        [(2, 3), (2, 2)],
        grad=[True, False],
    ),
    OpCase("stack_0d", lambda lib, x, y: lib.stack([x, y, x]), [(), ()]),
    OpCase("split_last_dim_sections", lambda lib, x: lib.split(x, [3, 1], dim=-1), [(2, 4)]),
    # -- selection
    OpCase("where", lambda lib, x, y: lib.where(_c(lib, MASK_3x4), x, y), [(3, 4), (4,)]),
    OpCase("masked_fill", lambda lib, x: x.masked_fill(_c(lib, MASK_3x4), -1.5), [(3, 4)]),
    OpCase(
        "masked_fill_broadcast",
        lambda lib, x: x.masked_fill(_c(lib, np.array([True, False, False, True])), 0.0),
        [(3, 4)],
    ),
    OpCase("where_scalar_other", lambda lib, x: lib.where(_c(lib, MASK_3x4), x, 0.0), [(3, 4)]),
    # -- losses
    OpCase("cross_entropy", lambda lib, x: F(lib).cross_entropy(x, _c(lib, TARGET_4)), [(4, 3)]),
    OpCase(
        "cross_entropy_sum",
        lambda lib, x: F(lib).cross_entropy(x, _c(lib, TARGET_4), reduction="sum"),
        [(4, 3)],
    ),
    OpCase(
        "cross_entropy_none",
        lambda lib, x: F(lib).cross_entropy(x, _c(lib, TARGET_4), reduction="none"),
        [(4, 3)],
    ),
    OpCase(
        "cross_entropy_ignore_default",
        lambda lib, x: F(lib).cross_entropy(x, _c(lib, TARGET_IGNORE)),
        [(4, 3)],
    ),
    OpCase(
        "cross_entropy_ignore_index",
        lambda lib, x: F(lib).cross_entropy(x, _c(lib, TARGET_IGNORE_3), ignore_index=3),
        [(4, 3)],
    ),
    OpCase(
        "nll_loss",
        lambda lib, x: F(lib).nll_loss(x.log_softmax(dim=1), _c(lib, TARGET_4)),
        [(4, 3)],
    ),
    OpCase("nll_loss_raw", lambda lib, x: F(lib).nll_loss(x, _c(lib, TARGET_4)), [(4, 3)]),
    OpCase(
        "nll_loss_sum",
        lambda lib, x: F(lib).nll_loss(x, _c(lib, TARGET_4), reduction="sum"),
        [(4, 3)],
    ),
    OpCase(
        "nll_loss_ignore_index",
        lambda lib, x: F(lib).nll_loss(x, _c(lib, TARGET_IGNORE_3), ignore_index=3),
        [(4, 3)],
    ),
    OpCase("mse_loss", lambda lib, x, y: F(lib).mse_loss(x, y), [(3, 4), (3, 4)]),
    OpCase(
        "mse_loss_sum", lambda lib, x, y: F(lib).mse_loss(x, y, reduction="sum"), [(3, 4), (3, 4)]
    ),
    OpCase(
        "mse_loss_none", lambda lib, x, y: F(lib).mse_loss(x, y, reduction="none"), [(3, 4), (3, 4)]
    ),
    OpCase(
        "bce_with_logits",
        lambda lib, x, y: F(lib).binary_cross_entropy_with_logits(x, y),
        [(3, 4), (3, 4)],
        ["real", "unit"],
        grad=[True, False],
    ),
    OpCase(
        "bce_with_logits_sum_large",
        lambda lib, x, y: F(lib).binary_cross_entropy_with_logits(8.0 * x, y, reduction="sum"),
        [(3, 4), (3, 4)],
        ["real", "unit"],
        grad=[True, False],
    ),
    # -- composites: a node used several times, and a small network
    OpCase("reuse", lambda lib, x: x * x + x.exp() * x, [(3, 4)]),
    OpCase(
        "mlp",
        lambda lib, x, w1, w2: ((x @ w1.T).tanh() @ w2.T).log_softmax(dim=-1),
        [(5, 4), (6, 4), (3, 6)],
    ),
    # -- more ops (section "More ops" of the chapter)
    OpCase("sin", lambda lib, x: x.sin(), [(3, 4)]),
    OpCase("cos", lambda lib, x: x.cos(), [(3, 4)]),
    OpCase("log1p", lambda lib, x: x.log1p(), [(3, 4)], "unit"),
    OpCase("square", lambda lib, x: x.square(), [(3, 4)]),
    OpCase("rsqrt", lambda lib, x: x.rsqrt(), [(3, 4)], "positive"),
    OpCase("cumsum_dim1", lambda lib, x: x.cumsum(dim=1), [(3, 4)]),
    OpCase("cumsum_dim0_3d", lambda lib, x: lib.cumsum(x, 0), [(3, 2, 4)]),
    OpCase(
        "gather_repeated",
        lambda lib, x: x.gather(1, _c(lib, [[0, 0, 3], [2, 1, 2], [3, 3, 3]])),
        [(3, 4)],
    ),
    OpCase(
        "gather_dim0_smaller_index",
        lambda lib, x: lib.gather(x, 0, _c(lib, [[1, 0], [2, 2]])),
        [(3, 4)],
    ),
    OpCase("repeat", lambda lib, x: x.repeat(2, 1, 3), [(3, 2)]),
    OpCase("repeat_same_dims", lambda lib, x: x.repeat(1, 2), [(3, 2)]),
    OpCase("norm_fro", lambda lib, x: x.norm(), [(3, 4)]),
    OpCase(
        "norm_p2_dims_keepdim", lambda lib, x: x.norm(p=2, dim=(0, 2), keepdim=True), [(2, 3, 4)]
    ),
    OpCase("norm_p1_dim1", lambda lib, x: lib.norm(x, p=1, dim=1), [(3, 4)], "nonzero"),
    OpCase("sort_descending", lambda lib, x: x.sort(dim=0, descending=True), [(3, 4)], "distinct"),
    OpCase("sort_last", lambda lib, x: lib.sort(x), [(2, 3, 4)], "distinct"),
    OpCase("topk_largest", lambda lib, x: x.topk(2, dim=1), [(3, 4)], "distinct"),
    OpCase(
        "topk_smallest", lambda lib, x: lib.topk(x, 3, dim=0, largest=False), [(3, 4)], "distinct"
    ),
    OpCase("bmm", lambda lib, x, y: x.bmm(y), [(2, 3, 4), (2, 4, 5)]),
    OpCase("outer", lambda lib, x, y: lib.outer(x, y), [(3,), (5,)]),
]

CASES_BY_NAME = {case.name: case for case in CASES}
assert len(CASES_BY_NAME) == len(CASES), "duplicate case names"


def outputs(result) -> list:
    """A case's result as a list (tuples from max(dim) and split, a single tensor otherwise)."""
    return list(result) if isinstance(result, (tuple, list)) else [result]


def is_float(lib, t) -> bool:
    return t.dtype in (lib.float32, lib.float64)


def scalarised(lib, case: OpCase) -> Callable:
    """``case.fn`` reduced to a scalar: sum over its float outputs of ``(out * w).sum()``.

    ``w`` is a fixed random cotangent (:func:`cotangent`), so the gradient tested is a
    vector-Jacobian product with a generic upstream gradient, not the special case of ones.
    """

    def fn(*inputs):
        total = None
        for out in outputs(case.fn(lib, *inputs)):
            if not is_float(lib, out):
                continue
            w = lib.tensor(cotangent(tuple(out.shape)).astype(np_dtype(lib, out.dtype)))
            term = (out * w).sum()
            total = term if total is None else total + term
        return total

    return fn


def np_dtype(lib, dtype) -> np.dtype:
    """The numpy dtype of a tensorlib or torch float dtype."""
    if lib.__name__ == "torch":
        return np.float64 if dtype == lib.float64 else np.float32
    return np.dtype(dtype)
