"""08 exercise 5: computes in float64.

Hint: expected float32
"""

import numpy as np


def gelu_tanh_fast(x):
    out = x.astype(np.float64)
    out = out * out * out
    out *= 0.044715
    out += x
    out *= SQRT_2_OVER_PI
    np.tanh(out, out=out)
    out += 1
    out *= x
    out *= 0.5
    return out
