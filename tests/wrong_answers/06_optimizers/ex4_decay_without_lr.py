"""06 exercise 4: AdamW's decay as param * (1 - weight_decay), forgetting the learning rate.

Hint: AdamW multiplies the parameter by (1 - lr * weight_decay)
"""

import numpy as np


def first_adam_step(param, grad, lr, weight_decay, decoupled, eps=1e-8):
    if decoupled:
        return param * (1 - weight_decay) - lr * grad / (np.abs(grad) + eps)
    grad = grad + weight_decay * param
    return param - lr * grad / (np.abs(grad) + eps)
