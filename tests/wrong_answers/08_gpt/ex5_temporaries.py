"""08 exercise 5: replaces x ** 3 by x * x * x but keeps the expression's temporaries.

Hint: compute into one buffer with in-place operations
"""

import numpy as np


def gelu_tanh_fast(x):
    return 0.5 * x * (1 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))))
