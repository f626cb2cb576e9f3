"""06 exercise 4: AdamW's decay applied after the gradient step instead of before it.

Hint: AdamW multiplies the parameter by (1 - lr * weight_decay)
"""

import numpy as np


def first_adam_step(param, grad, lr, weight_decay, decoupled, eps=1e-8):
    if decoupled:
        return (param - lr * grad / (np.abs(grad) + eps)) * (1 - lr * weight_decay)
    grad = grad + weight_decay * param
    return param - lr * grad / (np.abs(grad) + eps)
