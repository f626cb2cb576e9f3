"""03 exercise 4: uses the standard deviation sqrt(2 / (fan_in + fan_out)) as the bound.

Hint: that is the standard deviation
"""

import math


def xavier_bound(fan_in, fan_out, gain=1.0):
    return gain * math.sqrt(2.0 / (fan_in + fan_out))
