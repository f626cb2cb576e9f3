"""tensorlib.linalg: determinants, inverses, solves, norms, the cross product, chained
products, Cholesky factors and the symmetric eigendecomposition, as ``torch.linalg`` (chapter 2,
section 20.4).

Written by hand, re-exports only: the ops live in ``tensorlib.engine.linalg_ops`` and
``tensorlib.engine.linalg_norms``, generated from book/02_autograd.ipynb. There ``norm`` is
``linalg_norm``: chapter 2's notebook, where both modules are written, already has a ``norm``
(``torch.norm``'s, which ``Tensor.norm`` calls).
"""

from tensorlib.engine.linalg_norms import linalg_norm as norm
from tensorlib.engine.linalg_norms import matrix_norm, svdvals, vector_norm
from tensorlib.engine.linalg_ops import (
    LinAlgError, cholesky, cross, det, eigh, inv, multi_dot, slogdet, solve,
)

__all__ = [
    "LinAlgError", "cholesky", "cross", "det", "eigh", "inv", "matrix_norm", "multi_dot", "norm",
    "slogdet", "solve", "svdvals", "vector_norm",
]
