"""03 exercise 3: returns (fan_out, fan_in).

Hint: fans(3, 4): expected (fan_in, fan_out) = (4, 3)
"""

import math


def fans(shape):
    if len(shape) < 2:
        raise ValueError(f"shape {shape} has no fans")
    receptive_field = math.prod(shape[2:])
    return shape[0] * receptive_field, shape[1] * receptive_field
