"""02 exercise 2: forgets the minus sign of d(a/b)/db.

Hint: has the wrong sign
"""

def div_backward(a, b, grad_out):
    return tl.sum_to_shape(grad_out / b, a.shape), tl.sum_to_shape(grad_out * a / (b * b), b.shape)
