"""02 exercise 6: takes log(sum(exp(x))) directly, which overflows at 1000.

Hint: exp(1000) overflows
"""

import numpy as np


def logsumexp(x, dim=-1):
    with np.errstate(over="ignore", divide="ignore"):
        return np.log(np.exp(x).sum(axis=dim))
