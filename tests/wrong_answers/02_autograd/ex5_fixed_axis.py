"""02 exercise 5: sums over the last axis whatever dim is.

Hint: sums along the last axis: sum along dim
"""

def softmax_backward(y, grad_y, dim=-1):
    return y * (grad_y - (grad_y * y).sum(axis=-1, keepdims=True))
