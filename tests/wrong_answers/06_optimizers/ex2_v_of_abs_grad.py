"""06 exercise 2: averages |g| instead of g² in v.

Hint: v after step 1
"""

import numpy as np


def adam_step(param, grad, m, v, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    m = betas[0] * m + (1 - betas[0]) * grad
    v = betas[1] * v + (1 - betas[1]) * np.abs(grad)
    return param - lr * (m / (1 - betas[0] ** t)) / (v / (1 - betas[1] ** t) + eps), m, v
