"""02 exercise 5: subtracts the sum of grad_y instead of the sum of grad_y * y.

Hint: softmax_backward for shape (4,), dim=-1
"""

def softmax_backward(y, grad_y, dim=-1):
    return y * (grad_y - grad_y.sum(axis=dim, keepdims=True))
