"""tensorlib.special: special functions under ``torch.special``'s names (chapter 2, sections 16,
16.1 and 17).

Written by hand, re-exports only: each function lives in the engine module of its chapter
section (``tensorlib.engine.special_ops`` for most; ``special_gamma``, ``special_bessel`` and
``special_polynomials`` for the incomplete gamma and zeta functions, the Bessel family and the
orthogonal polynomials).
"""

from tensorlib.engine.elementwise import expm1, log1p, round
from tensorlib.engine.elementwise import sigmoid as expit
from tensorlib.engine.softmax_ops import log_softmax, logsumexp, softmax
from tensorlib.engine.special_ops import (
    entr, erf, erfc, erfinv, exp2, logit, ndtr, ndtri, sinc, xlog1py, xlogy,
)
from tensorlib.engine.special_ops import digamma, polygamma
from tensorlib.engine.special_ops import erfcx, i0, i0e, i1, i1e, log_ndtr, multigammaln
from tensorlib.engine.special_gamma import gammainc, gammaincc, zeta
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
from tensorlib.engine.special_ops import digamma as psi
from tensorlib.engine.special_ops import lgamma as gammaln

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr",
    "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit",
    "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy",
    "zeta",
]
