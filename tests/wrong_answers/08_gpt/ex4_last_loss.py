"""08 exercise 4: tests the last loss instead of the mean of the last ten.

Hint: not the last loss alone
"""

import math
import numpy as np


def smallest_diverging_lr(lrs):
    for lr in lrs:
        losses = train_tiny(lr)

        if not math.isfinite(losses[-1]) or losses[-1] > losses[0]:
            return lr
    return None
