"""03 exercise 4: ignores the gain in the Kaiming bound.

Hint: the gain is ignored
"""

import math


def kaiming_bound(fan, gain=math.sqrt(2)):
    return math.sqrt(3.0 / fan)
