"""08 exercise 4: forgets that NaN compares False: a NaN run counts as learning.

Hint: NaN losses are divergence too
"""

import math
import numpy as np


def smallest_diverging_lr(lrs):
    for lr in lrs:
        losses = train_tiny(lr)

        if float(np.mean(losses[-10:])) > losses[0]:
            return lr
    return None
