"""01 exercise 5: averages over the broadcast axes instead of summing.

Hint: not their mean
"""

def unbroadcast(grad, shape):
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    summed = grad.mean(axis=tuple(range(lead))) if lead else grad
    stretched = tuple(k for k, n in enumerate(shape) if n == 1 and summed.shape[k] != 1)
    return summed.mean(axis=stretched, keepdims=True) if stretched else summed
