"""tensorlib.special: special functions under ``torch.special``'s names (chapter 2, sections 16,
16.1 and 17).

Written by hand, re-exports only: each function lives in the engine module of its chapter
section (``tensorlib.engine.special_ops`` for most).
"""

from tensorlib.engine.elementwise import expm1, log1p, round
from tensorlib.engine.elementwise import sigmoid as expit
from tensorlib.engine.softmax_ops import log_softmax, logsumexp, softmax
from tensorlib.engine.special_ops import (
    entr, erf, erfc, erfinv, exp2, logit, ndtr, ndtri, sinc, xlog1py, xlogy,
)
from tensorlib.engine.special_ops import digamma, polygamma
from tensorlib.engine.special_ops import erfcx, i0, i0e, i1, i1e, log_ndtr, multigammaln
from tensorlib.engine.special_ops import digamma as psi
from tensorlib.engine.special_ops import lgamma as gammaln

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammaln",
    "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
    "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py",
    "xlogy",
]
