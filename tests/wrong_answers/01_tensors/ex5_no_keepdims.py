"""01 exercise 5: sums the stretched axes without keeping them.

Hint: must stay in the result as size 1
"""

def unbroadcast(grad, shape):
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    summed = grad.sum(axis=tuple(range(lead))) if lead else grad
    stretched = tuple(k for k, n in enumerate(shape) if n == 1 and summed.shape[k] != 1)
    return summed.sum(axis=stretched) if stretched else summed
