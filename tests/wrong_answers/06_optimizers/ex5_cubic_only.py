"""06 exercise 5: drops the fifth-order term c A² X.

Hint: p(s) = a s + b s^3 + c s^5
"""

def newton_schulz_step(x, coefficients=(3.4445, -4.7750, 2.0315)):
    a, b, c = coefficients
    return a * x + b * (x @ x.T) @ x
