"""08 exercise 4: returns the largest learning rate that still learns, one before the first that
diverges.

Hint: 0.5 learns
"""

import math

import numpy as np


def smallest_diverging_lr(lrs):
    previous = None
    for lr in lrs:
        losses = train_tiny(lr)
        tail = float(np.mean(losses[-10:]))
        if not math.isfinite(tail) or tail > losses[0]:
            return previous
        previous = lr
    return None
