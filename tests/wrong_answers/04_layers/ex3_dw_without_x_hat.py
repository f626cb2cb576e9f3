"""04 exercise 3: sums grad_out for dw, forgetting the factor x_hat.

Hint: dw is the sum of grad_out * x_hat
"""

import numpy as np


def layer_norm_backward(x, weight, grad_out, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    inv_std = 1.0 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - mean) * inv_std
    g = grad_out * weight
    lead = tuple(range(x.ndim - 1))

    dx = inv_std * (
        g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)
    )
    return dx, grad_out.sum(axis=lead), grad_out.sum(axis=lead)
