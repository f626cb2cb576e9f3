"""05 exercise 5: the new max is the block's max, forgetting the running one.

Hint: it never decreases
"""

import numpy as np


def online_softmax_step(m, ell, acc, scores, values):
    block = float(np.max(scores))
    new_m = block if block > -np.inf else m
    shift = 0.0 if new_m == -np.inf else new_m
    alpha = np.exp(m - shift)
    weights = np.exp(scores - shift)
    return new_m, alpha * ell + weights.sum(), alpha * acc + weights @ values
