"""02 exercise 2: does not sum the gradients to the input shapes.

Hint: grad of b for a(3, 4) / b(4,)
"""

import numpy as np


def div_backward(a, b, grad_out):
    return grad_out / b, -grad_out * a / (b * b)
