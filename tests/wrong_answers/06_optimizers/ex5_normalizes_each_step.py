"""06 exercise 5: divides by the Frobenius norm in every step (zeropower normalizes once, before the
iteration).

Hint: one step, U p(Sigma)
"""

import numpy as np


def newton_schulz_step(x, coefficients=(3.4445, -4.7750, 2.0315)):
    a, b, c = coefficients
    x = x / (np.linalg.norm(x) + 1e-7)
    gram = x @ x.T
    return a * x + (b * gram + c * gram @ gram) @ x
