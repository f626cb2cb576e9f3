"""08 exercise 5: the same formula in place, still with x ** 3.

Hint: gelu_tanh_fast computes a power
"""

import numpy as np


def gelu_tanh_fast(x):
    out = x**3
    out *= np.float32(0.044715)
    out += x
    out *= SQRT_2_OVER_PI
    np.tanh(out, out=out)
    out += 1
    out *= x
    out *= 0.5
    return out
