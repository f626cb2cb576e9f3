"""tensorlib.linalg: determinants, inverses, solves, norms, the cross product, chained
products, Cholesky factors, the symmetric eigendecomposition, the SVD, QR, the pseudo-inverse and
least squares, the matrix exponential, LU factors, the ``_ex`` forms and condition numbers, as
``torch.linalg`` (chapter 2, section 20.4).

Written by hand, re-exports only: the ops live in ``tensorlib.engine.linalg_ops``,
``tensorlib.engine.linalg_norms``, ``tensorlib.engine.linalg_decomps`` and
``tensorlib.linalg.more``, generated from
book/02_autograd.ipynb. There ``norm`` is ``linalg_norm``: chapter 2's notebook, where the
modules are written, already has a ``norm`` (``torch.norm``'s, which ``Tensor.norm`` calls);
so are ``vander``, ``diagonal`` and ``matmul`` (``linalg_vander``, ...).
"""

from tensorlib.engine.linalg_norms import linalg_norm as norm
from tensorlib.engine.linalg_norms import matrix_norm, svdvals, vector_norm
from tensorlib.engine.linalg_ops import (
    LinAlgError, cholesky, cross, det, eigh, inv, multi_dot, slogdet, solve,
)
from tensorlib.engine.linalg_decomps import (
    eigvalsh, lstsq, matrix_power, matrix_rank, pinv, qr, solve_triangular, svd, vecdot,
)
from tensorlib.linalg.more import (
    cholesky_ex, cond, householder_product, inv_ex, lu, lu_factor, lu_factor_ex, lu_solve,
    matrix_exp, solve_ex, tensorinv, tensorsolve,
)
from tensorlib.linalg.more import linalg_diagonal as diagonal, linalg_matmul as matmul
from tensorlib.linalg.more import linalg_vander as vander

__all__ = [
    "LinAlgError", "cholesky", "cross", "det", "eigh", "eigvalsh", "inv", "lstsq", "matrix_norm",
    "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve",
    "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm",
    "cholesky_ex", "cond", "diagonal", "inv_ex", "lu", "lu_factor", "lu_solve", "matmul",
    "matrix_exp", "solve_ex", "tensorinv", "tensorsolve", "vander", "householder_product",
    "lu_factor_ex",
]
