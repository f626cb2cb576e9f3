"""05 exercise 4: forgets the biases of the attention projections.

Hint: a width-8 block has 872 parameters
"""

def block_parameter_count(n_embd, mlp_ratio=4, bias=True):
    e, hidden, b = n_embd, mlp_ratio * n_embd, int(bias)
    return 2 * (e + b * e) + 3 * e * e + e * e + (e * hidden + b * hidden) + (hidden * e + b * e)
