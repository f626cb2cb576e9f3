"""02 exercise 2: multiplies by b instead of dividing in grad_a.

Hint: (divide, not multiply)
"""

def div_backward(a, b, grad_out):
    return tl.sum_to_shape(grad_out * b, a.shape), tl.sum_to_shape(-grad_out * a / (b * b), b.shape)
