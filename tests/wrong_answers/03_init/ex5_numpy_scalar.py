"""03 exercise 5: returns a numpy scalar.

Hint: should return a float
"""

import math
import numpy as np


def relu_gain_estimate(scale, n=1_000_000, seed=0):
    x = scale * tl.randn(n, generator=tl.Generator(seed), dtype=tl.float64).numpy()
    return np.sqrt(np.float32(x.var() / np.mean(np.maximum(x, 0.0) ** 2)))
