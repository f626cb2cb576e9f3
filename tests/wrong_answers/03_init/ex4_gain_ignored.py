"""03 exercise 4: ignores the gain in the Kaiming bound.

Hint: PyTorch's default Linear bound 1/16
"""

import math


def kaiming_bound(fan, gain=math.sqrt(2)):
    return math.sqrt(3.0 / fan)
