"""03 exercise 5: returns sqrt(2) without estimating.

Hint: the function must estimate from the sample
"""

import math
import numpy as np


def relu_gain_estimate(scale, n=1_000_000, seed=0):
    return math.sqrt(2)
