"""08 exercise 1: counts one FLOP per weight (and per attention product) instead of two.

Hint: 2 FLOPs per weight
"""

def count_parameters(config):
    V, T, C, L, r = (
        config.vocab_size, config.block_size, config.n_embd, config.n_layer, config.mlp_ratio
    )
    per_block = (
        2 * 2 * C + (3 * C * C + 3 * C) + (C * C + C) + (r * C * C + r * C) + (r * C * C + C)
    )
    return V * C + T * C + L * per_block + 2 * C


def forward_flops_per_token(config):
    V, T, C, L, r = (
        config.vocab_size, config.block_size, config.n_embd, config.n_layer, config.mlp_ratio
    )
    matrices = L * (3 * C * C + C * C + 2 * r * C * C) + V * C
    return matrices + L * (2 * T * C)
