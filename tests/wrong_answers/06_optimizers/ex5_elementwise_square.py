"""06 exercise 5: squares the Gram matrix elementwise (gram * gram) instead of gram @ gram.

Hint: U p(Sigma) V^T
"""

def newton_schulz_step(x, coefficients=(3.4445, -4.7750, 2.0315)):
    a, b, c = coefficients
    gram = x @ x.T
    return a * x + (b * gram + c * gram * gram) @ x
