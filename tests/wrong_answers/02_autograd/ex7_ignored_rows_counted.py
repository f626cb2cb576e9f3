"""02 exercise 7: divides by N, counting the ignored rows.

Hint: the mean is over the 2 rows whose target is not ignore_index
"""

import numpy as np


def cross_entropy_backward(logits, target, ignore_index=-100):
    kept = target != ignore_index

    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.flatnonzero(kept), target[kept]] -= 1.0
    p[~kept] = 0.0
    return p / len(target)
