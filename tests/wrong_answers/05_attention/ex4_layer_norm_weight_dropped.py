"""05 exercise 4: with bias=False, drops the LayerNorms' weights too.

Hint: bias=False: the Block has
"""

def block_parameter_count(n_embd, mlp_ratio=4, bias=True):
    e, hidden, b = n_embd, mlp_ratio * n_embd, int(bias)
    return 2 * b * 2 * e + (3 * e * e + b * 3 * e) + (e * e + b * e) + (e * hidden + b * hidden) + (hidden * e + b * e)
