"""08 exercise 1: forgets the LayerNorms altogether.

Hint: LayerNorms: two per block and the final ln_f
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
    return V * C + T * C + L * per_block + 2 * C - (2 * L + 1) * 2 * C
