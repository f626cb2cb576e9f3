"""04 exercise 2: returns dW with the shape of W transposed.

Hint: dW has the shape of W transposed
"""

def linear_backward(x, weight, grad_out):
    rows_in, rows_out = x.reshape(-1, x.shape[-1]), grad_out.reshape(-1, grad_out.shape[-1])
    return grad_out @ weight, rows_in.T @ rows_out, rows_out.sum(axis=0)
