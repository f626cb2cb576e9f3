"""03 exercise 4: multiplies by the gain squared.

Hint: xavier_bound(784, 10, 1.6667)
"""

import math


def xavier_bound(fan_in, fan_out, gain=1.0):
    return gain**2 * math.sqrt(6.0 / (fan_in + fan_out))
