"""03 exercise 2: uses the sine of the Box-Muller pair instead of the cosine.

Hint: the sine would be 0
"""

import numpy as np


def box_muller(x1, x2):
    u1 = ((x1 >> np.uint64(40)).astype(np.float64) + 1.0) / 16777217.0
    u2 = (x2 >> np.uint64(40)).astype(np.float64) * 2.0**-24
    return np.sqrt(-2.0 * np.log(u1)) * np.sin(2.0 * np.pi * u2)
