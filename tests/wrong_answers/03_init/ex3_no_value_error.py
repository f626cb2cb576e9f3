"""03 exercise 3: indexes shape[1] without checking, so a 1-d shape raises IndexError.

Hint: got IndexError
"""

import math


def fans(shape):
    receptive_field = math.prod(shape[2:])
    return shape[1] * receptive_field, shape[0] * receptive_field
