"""06 exercise 2: weights the new gradient by beta instead of 1 - beta.

Hint: m after step 1
"""

import numpy as np


def adam_step(param, grad, m, v, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    m = (1 - betas[0]) * m + betas[0] * grad
    v = (1 - betas[1]) * v + betas[1] * grad * grad
    return param - lr * (m / (1 - betas[0] ** t)) / (np.sqrt(v / (1 - betas[1] ** t)) + eps), m, v
