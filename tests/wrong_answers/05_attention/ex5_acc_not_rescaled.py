"""05 exercise 5: rescales the sum but not the accumulator.

Hint: A/ℓ against the direct softmax average
"""

import numpy as np


def online_softmax_step(m, ell, acc, scores, values):
    new_m = max(m, float(np.max(scores)))
    shift = 0.0 if new_m == -np.inf else new_m
    alpha = np.exp(m - shift)
    weights = np.exp(scores - shift)
    return new_m, alpha * ell + weights.sum(), acc + weights @ values
