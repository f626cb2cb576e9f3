"""01 exercise 5: sums the leading axes but not the stretched size-1 axes.

Hint: sum also over the axes where shape has a 1
"""

def unbroadcast(grad, shape):
    lead = grad.ndim - len(shape)
    return grad.sum(axis=tuple(range(lead))) if lead else grad
