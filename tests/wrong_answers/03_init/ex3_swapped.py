"""03 exercise 3: returns (fan_out, fan_in).

Hint: fan_in and fan_out are swapped
"""

import math


def fans(shape):
    if len(shape) < 2:
        raise ValueError(f"shape {shape} has no fans")
    receptive_field = math.prod(shape[2:])
    return shape[0] * receptive_field, shape[1] * receptive_field
