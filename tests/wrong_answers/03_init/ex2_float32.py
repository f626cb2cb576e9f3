"""03 exercise 2: computes in float32.

Hint: expected a float64 array
"""

import numpy as np


def box_muller(x1, x2):
    u1 = ((x1 >> np.uint64(40)).astype(np.float32) + 1) / np.float32(16777217.0)
    u2 = (x2 >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)
    return np.sqrt(-2 * np.log(u1)) * np.cos(np.float32(2 * np.pi) * u2)
