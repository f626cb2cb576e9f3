"""02 exercise 2: does not sum the gradients to the input shapes.

Hint: back to its operand's shape (tl.sum_to_shape)
"""

import numpy as np


def div_backward(a, b, grad_out):
    return grad_out / b, -grad_out * a / (b * b)
