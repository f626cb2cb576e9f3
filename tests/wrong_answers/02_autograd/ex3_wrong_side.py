"""02 exercise 3: multiplies by the transpose on the wrong side, b.T @ grad_out.

Hint: grad_a = grad_out @ bᵀ is (n, m)(m, k)
"""

import numpy as np


def matmul_backward(a, b, grad_out):
    grad_a = np.swapaxes(b, -1, -2) @ grad_out
    grad_b = grad_out @ np.swapaxes(a, -1, -2)
    return tl.sum_to_shape(grad_a, a.shape), tl.sum_to_shape(grad_b, b.shape)
