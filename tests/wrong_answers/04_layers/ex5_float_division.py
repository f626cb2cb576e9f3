"""04 exercise 5: divides with / and returns a float.

Hint: use floor division //
"""

import math


def conv_output_size(n, kernel_size, stride=1, padding=0):
    span = n + 2 * padding - kernel_size
    if span < 0:
        raise ValueError("the window does not fit")
    return math.floor(span / stride) + 1.0
