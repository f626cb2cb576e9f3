"""04 exercise 6: drops without rescaling the kept entries.

Hint: the kept entries are not rescaled
"""

import numpy as np


def inverted_dropout(x, keep, p):
    if not 0.0 <= p < 1.0:
        raise ValueError(f"p must be in [0, 1), got {p}")
    return np.where(keep, x, 0.0)
