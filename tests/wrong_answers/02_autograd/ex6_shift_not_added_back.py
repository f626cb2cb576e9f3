"""02 exercise 6: subtracts the max but forgets to add it back.

Hint: is short by the max m
"""

import numpy as np


def logsumexp(x, dim=-1):
    m = x.max(axis=dim, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(x - m).sum(axis=dim))
