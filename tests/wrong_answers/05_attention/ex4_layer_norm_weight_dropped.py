"""05 exercise 4: with bias=False, drops the LayerNorms' weights too.

Hint: bias=False: the Block has
"""

def block_parameter_count(n_embd, mlp_ratio=4, bias=True):
    c, hidden, b = n_embd, mlp_ratio * n_embd, int(bias)
    return (
        2 * b * 2 * c
        + (3 * c * c + b * 3 * c)
        + (c * c + b * c)
        + (c * hidden + b * hidden)
        + (hidden * c + b * c)
    )
