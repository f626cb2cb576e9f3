"""05 exercise 5: the old sum and accumulator are not rescaled by alpha when the max grows.

Hint: the old sum must be rescaled
"""

import numpy as np


def online_softmax_step(m, ell, acc, scores, values):
    new_m = max(m, float(np.max(scores)))
    shift = 0.0 if new_m == -np.inf else new_m
    weights = np.exp(scores - shift)
    return new_m, ell + weights.sum(), acc + weights @ values
