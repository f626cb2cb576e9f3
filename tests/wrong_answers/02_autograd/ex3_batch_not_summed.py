"""02 exercise 3: forgets to sum the broadcast batch axes.

Hint: grad of a for a(1, 3, 4) @ b(6, 4, 2)
"""

import numpy as np


def matmul_backward(a, b, grad_out):
    return grad_out @ np.swapaxes(b, -1, -2), np.swapaxes(a, -1, -2) @ grad_out
