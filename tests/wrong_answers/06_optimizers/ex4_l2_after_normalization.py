"""06 exercise 4: adds the L2 decay after the division by |g|, as if it were decoupled.

Hint: L2 decay goes into the gradient, before the division by sqrt(v)
"""

import numpy as np


def first_adam_step(param, grad, lr, weight_decay, decoupled, eps=1e-8):
    step = grad / (np.abs(grad) + eps)
    if decoupled:
        return param * (1 - lr * weight_decay) - lr * step
    return param - lr * (step + weight_decay * param)
