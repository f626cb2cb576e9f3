"""06 exercise 3: returns a one-element array instead of a number.

Hint: expected one number
"""

import numpy as np


def max_stable_lr(hessian):
    return 2.0 / np.linalg.eigvalsh(hessian)[-1:]
