"""06 exercise 3: uses the trace (the sum of the eigenvalues) instead of the largest eigenvalue.

Hint: n=2, eigenvalues
"""

import numpy as np


def max_stable_lr(hessian):
    return 2.0 / float(np.trace(hessian))
