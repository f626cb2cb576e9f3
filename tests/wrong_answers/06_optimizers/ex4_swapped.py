"""06 exercise 4: swaps the two: L2 for decoupled=True and decoupled decay for decoupled=False.

Hint: Adam (L2), lr 0.1
"""

import numpy as np


def first_adam_step(param, grad, lr, weight_decay, decoupled, eps=1e-8):
    if not decoupled:
        return param * (1 - lr * weight_decay) - lr * grad / (np.abs(grad) + eps)
    grad = grad + weight_decay * param
    return param - lr * grad / (np.abs(grad) + eps)
