"""04 exercise 2: averages instead of summing over the output features in dX (a stray factor 1/2 for
these shapes).

Hint: dX = G W sums over the output features
"""

def linear_backward(x, weight, grad_out):
    rows_in, rows_out = x.reshape(-1, x.shape[-1]), grad_out.reshape(-1, grad_out.shape[-1])
    return grad_out @ weight * 0.5, rows_out.T @ rows_in, rows_out.sum(axis=0)
