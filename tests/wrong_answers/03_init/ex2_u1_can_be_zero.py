"""03 exercise 2: maps x1 to [0, 1), so u1 = 0 makes log(0) infinite.

Hint: so log(u1) is finite
"""

import numpy as np


def box_muller(x1, x2):
    u1 = (x1 >> np.uint64(40)).astype(np.float64) * 2.0**-24
    u2 = (x2 >> np.uint64(40)).astype(np.float64) * 2.0**-24
    with np.errstate(divide="ignore"):
        return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
