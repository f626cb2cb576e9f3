"""06 exercise 2: puts eps inside the square root, which swamps small gradients.

Hint: eps goes outside the square root
"""

import numpy as np


def adam_step(param, grad, m, v, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    m = betas[0] * m + (1 - betas[0]) * grad
    v = betas[1] * v + (1 - betas[1]) * grad * grad
    return param - lr * (m / (1 - betas[0] ** t)) / np.sqrt(v / (1 - betas[1] ** t) + eps), m, v
