"""03 exercise 3: takes the last two axes as (fan_out, fan_in).

Hint: a weight is (out, in, *kernel): fan_in = shape[1] * r
"""

import math


def fans(shape):
    if len(shape) < 2:
        raise ValueError(f"shape {shape} has no fans")
    rest = math.prod(shape[:-2])
    return shape[-1] * rest, shape[-2] * rest
