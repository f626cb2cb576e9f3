"""02 exercise 7: divides by the number of kept rows even when it is 0.

Hint: divide by max(kept, 1)
"""

import numpy as np


def cross_entropy_backward(logits, target, ignore_index=-100):
    kept = target != ignore_index

    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.flatnonzero(kept), target[kept]] -= 1.0
    p[~kept] = 0.0
    return p / kept.sum()
