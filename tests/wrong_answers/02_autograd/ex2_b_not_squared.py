"""02 exercise 2: divides by b instead of b**2 in grad_b.

Hint: -a / b**2 (b squared)
"""

def div_backward(a, b, grad_out):
    return tl.sum_to_shape(grad_out / b, a.shape), tl.sum_to_shape(-grad_out * a / b, b.shape)
