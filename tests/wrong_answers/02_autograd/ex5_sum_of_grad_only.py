"""02 exercise 5: subtracts the sum of grad_y instead of the sum of grad_y * y.

Hint: subtracts sum(grad_y): the inner product is sum(grad_y * y
"""

def softmax_backward(y, grad_y, dim=-1):
    return y * (grad_y - grad_y.sum(axis=dim, keepdims=True))
