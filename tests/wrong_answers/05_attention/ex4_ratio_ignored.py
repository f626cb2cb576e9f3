"""05 exercise 4: the MLP's hidden width is always 4C, ignoring mlp_ratio.

Hint: mlp_ratio=2
"""

def block_parameter_count(n_embd, mlp_ratio=4, bias=True):
    e, hidden, b = n_embd, 4 * n_embd, int(bias)
    return 2 * (e + b * e) + (3 * e * e + b * 3 * e) + (e * e + b * e) + (e * hidden + b * hidden) + (hidden * e + b * e)
