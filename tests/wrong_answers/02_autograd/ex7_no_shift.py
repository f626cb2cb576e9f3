"""02 exercise 7: the softmax without the max shift, which overflows at extreme logits.

Hint: exp(800) overflows; subtract each row's max
"""

import numpy as np


def cross_entropy_backward(logits, target, ignore_index=-100):
    kept = target != ignore_index

    with np.errstate(over="ignore", invalid="ignore"):
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
    p[np.flatnonzero(kept), target[kept]] -= 1.0
    p[~kept] = 0.0
    return p / max(int(kept.sum()), 1)
