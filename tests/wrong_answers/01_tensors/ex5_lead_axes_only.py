"""01 exercise 5: sums the leading axes but not the stretched size-1 axes.

Hint: shape of unbroadcast(grad of shape (2, 3, 4), (1, 4))
"""

def unbroadcast(grad, shape):
    lead = grad.ndim - len(shape)
    return grad.sum(axis=tuple(range(lead))) if lead else grad
