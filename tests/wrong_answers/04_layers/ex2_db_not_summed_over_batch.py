"""04 exercise 2: sums db over the last batch axis only.

Hint: sum the upstream gradient over every batch dimension
"""

def linear_backward(x, weight, grad_out):
    rows_in, rows_out = x.reshape(-1, x.shape[-1]), grad_out.reshape(-1, grad_out.shape[-1])
    return (
        grad_out @ weight,
        rows_out.T @ rows_in,
        grad_out.sum(axis=-2) if grad_out.ndim > 2 else grad_out.sum(axis=0),
    )
