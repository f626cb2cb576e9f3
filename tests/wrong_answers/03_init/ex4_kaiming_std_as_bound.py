"""03 exercise 4: uses the standard deviation gain / sqrt(fan) as the bound.

Hint: that is the standard deviation
"""

import math


def kaiming_bound(fan, gain=math.sqrt(2)):
    return gain / math.sqrt(fan)
