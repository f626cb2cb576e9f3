"""02 exercise 7: returns the gradient of the summed loss, not the mean.

Hint: is the gradient of the summed loss
"""

import numpy as np


def cross_entropy_backward(logits, target, ignore_index=-100):
    kept = target != ignore_index

    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.flatnonzero(kept), target[kept]] -= 1.0
    p[~kept] = 0.0
    return p
