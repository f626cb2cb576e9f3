"""05 exercise 4: the MLP's hidden width is always 4C, ignoring mlp_ratio.

Hint: mlp_ratio=2
"""

def block_parameter_count(n_embd, mlp_ratio=4, bias=True):
    c, hidden, b = n_embd, 4 * n_embd, int(bias)
    return (
        2 * (c + b * c)
        + (3 * c * c + b * 3 * c)
        + (c * c + b * c)
        + (c * hidden + b * hidden)
        + (hidden * c + b * c)
    )
