"""05 exercise 4: forgets the biases of the attention projections.

Hint: a width-8 block has 872 parameters
"""

def block_parameter_count(n_embd, mlp_ratio=4, bias=True):
    c, hidden, b = n_embd, mlp_ratio * n_embd, int(bias)
    return 2 * (c + b * c) + 3 * c * c + c * c + (c * hidden + b * hidden) + (hidden * c + b * c)
