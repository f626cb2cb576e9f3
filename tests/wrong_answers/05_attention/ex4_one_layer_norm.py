"""05 exercise 4: counts one LayerNorm instead of two.

Hint: count ln_1 and ln_2
"""

def block_parameter_count(n_embd, mlp_ratio=4, bias=True):
    c, hidden, b = n_embd, mlp_ratio * n_embd, int(bias)
    return (
        (c + b * c)
        + (3 * c * c + b * 3 * c)
        + (c * c + b * c)
        + (c * hidden + b * hidden)
        + (hidden * c + b * c)
    )
