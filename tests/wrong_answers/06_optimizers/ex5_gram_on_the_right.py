"""06 exercise 5: the n x n Gram matrix x.T @ x multiplied on the left of x.

Hint: the Gram matrix of a wide matrix is x @ x.T
"""

def newton_schulz_step(x, coefficients=(3.4445, -4.7750, 2.0315)):
    a, b, c = coefficients
    gram = x.T @ x
    return a * x + (b * gram + c * gram @ gram) @ x
