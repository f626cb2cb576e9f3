"""08 exercise 3: puts 0 instead of -inf outside the top k.

Hint: put -inf, not 0 or a small number
"""

import numpy as np


def top_k_filter(logits, k):
    if k >= logits.shape[-1]:
        return logits.copy()
    kth = np.sort(logits, axis=-1)[:, -k][:, None]
    return np.where(logits < kth, 0.0, logits)
