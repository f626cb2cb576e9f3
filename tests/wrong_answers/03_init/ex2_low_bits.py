"""03 exercise 2: takes the low 24 bits instead of the top 24.

Hint: come from the low 24 bits
"""

import numpy as np


def box_muller(x1, x2):
    u1 = ((x1 & np.uint64(0xFFFFFF)).astype(np.float64) + 1.0) / 16777217.0
    u2 = (x2 & np.uint64(0xFFFFFF)).astype(np.float64) * 2.0**-24
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
