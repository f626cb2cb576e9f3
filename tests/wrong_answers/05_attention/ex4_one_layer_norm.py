"""05 exercise 4: counts one LayerNorm instead of two.

Hint: count ln_1 and ln_2
"""

def block_parameter_count(n_embd, mlp_ratio=4, bias=True):
    e, hidden, b = n_embd, mlp_ratio * n_embd, int(bias)
    return (e + b * e) + (3 * e * e + b * 3 * e) + (e * e + b * e) + (e * hidden + b * hidden) + (hidden * e + b * e)
