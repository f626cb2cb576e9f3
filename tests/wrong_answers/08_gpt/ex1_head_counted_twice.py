"""08 exercise 1: counts the tied head as a separate V x C matrix.

Hint: count that matrix once
"""

def count_parameters(config):
    V, T, C, L, r = (
        config.vocab_size,
        config.block_size,
        config.n_embd,
        config.n_layer,
        config.mlp_ratio,
    )
    per_block = (
        2 * 2 * C + (3 * C * C + 3 * C) + (C * C + C) + (r * C * C + r * C) + (r * C * C + C)
    )
    return V * C + T * C + L * per_block + 2 * C + V * C
