"""02 exercise 5: sums over the last axis whatever dim is.

Hint: softmax_backward for shape (3, 5), dim=0
"""

def softmax_backward(y, grad_y, dim=-1):
    return y * (grad_y - (grad_y * y).sum(axis=-1, keepdims=True))
