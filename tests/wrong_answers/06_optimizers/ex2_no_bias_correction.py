"""06 exercise 2: forgets the bias correction: the first steps are too small.

Hint: check the bias correction
"""

import numpy as np


def adam_step(param, grad, m, v, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    m = betas[0] * m + (1 - betas[0]) * grad
    v = betas[1] * v + (1 - betas[1]) * grad * grad
    return param - lr * m / (np.sqrt(v) + eps), m, v
