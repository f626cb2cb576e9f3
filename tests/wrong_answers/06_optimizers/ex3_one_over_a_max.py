"""06 exercise 3: returns 1/a_max, the rate that jumps straight to the minimum of the sharpest
direction.

Hint: 1/a_max is where the step lands
"""

import numpy as np


def max_stable_lr(hessian):
    return 1.0 / float(np.linalg.eigvalsh(hessian).max())
