"""03 exercise 4: uses the standard deviation gain / sqrt(fan) as the bound.

Hint: PyTorch's default Linear bound 1/16
"""

import math


def kaiming_bound(fan, gain=math.sqrt(2)):
    return gain / math.sqrt(fan)
