"""02 exercise 1: returns the masked gradient without summing it to the shapes of a and b.

Hint: back to its operand's shape (tl.sum_to_shape)
"""

import numpy as np


def where_backward(cond, a, b, grad_out):
    picks_a = np.broadcast_to(cond, grad_out.shape)
    return np.where(picks_a, grad_out, 0.0), np.where(picks_a, 0.0, grad_out)
