"""04 exercise 6: accepts p = 1, whose scale 1/(1 - p) is infinite.

Hint: p=1.0 is outside [0, 1)
"""

import numpy as np


def inverted_dropout(x, keep, p):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    with np.errstate(divide="ignore"):
        return np.where(keep, x / (1.0 - p) if p < 1 else 0.0 * x, 0.0)
