"""02 exercise 5: returns y * grad_y, forgetting the sum term.

Hint: the inner term is missing
"""

def softmax_backward(y, grad_y, dim=-1):
    return y * grad_y
