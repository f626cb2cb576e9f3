"""08 exercise 4: averages every loss instead of the last ten.

Hint: average only the last 10 losses
"""

import math
import numpy as np


def smallest_diverging_lr(lrs):
    for lr in lrs:
        losses = train_tiny(lr)

        tail = float(np.mean(losses))
        if not math.isfinite(tail) or tail > losses[0]:
            return lr
    return None
