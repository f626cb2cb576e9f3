"""08 exercise 5: drops the factor sqrt(2/pi).

Hint: check the formula
"""

import numpy as np


def gelu_tanh_fast(x):
    out = x * x
    out *= x
    out *= np.float32(0.044715)
    out += x
    np.tanh(out, out=out)
    out += 1
    out *= x
    out *= 0.5
    return out
