"""02 exercise 3: forgets to sum the broadcast batch axes.

Hint: sum each gradient over the batch axes that broadcasting added or stretched
"""

import numpy as np


def matmul_backward(a, b, grad_out):
    return grad_out @ np.swapaxes(b, -1, -2), np.swapaxes(a, -1, -2) @ grad_out
