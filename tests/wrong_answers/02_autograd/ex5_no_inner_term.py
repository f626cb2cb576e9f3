"""02 exercise 5: returns y * grad_y, forgetting the sum term.

Hint: softmax_backward for shape (4,), dim=-1
"""

def softmax_backward(y, grad_y, dim=-1):
    return y * grad_y
