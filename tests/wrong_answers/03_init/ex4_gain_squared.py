"""03 exercise 4: multiplies by the gain squared.

Hint: multiplies by the gain squared
"""

import math


def xavier_bound(fan_in, fan_out, gain=1.0):
    return gain**2 * math.sqrt(6.0 / (fan_in + fan_out))
