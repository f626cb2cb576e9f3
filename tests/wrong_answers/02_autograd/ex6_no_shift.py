"""02 exercise 6: takes log(sum(exp(x))) directly, which overflows at 1000.

Hint: logsumexp of +-1000
"""

import numpy as np


def logsumexp(x, dim=-1):
    with np.errstate(over="ignore", divide="ignore"):
        return np.log(np.exp(x).sum(axis=dim))
