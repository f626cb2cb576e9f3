"""08 exercise 3: writes -inf into the input array.

Hint: top_k_filter changed its input
"""

import numpy as np


def top_k_filter(logits, k):
    if k >= logits.shape[-1]:
        return logits
    kth = np.sort(logits, axis=-1)[:, -k][:, None]
    logits[logits < kth] = -np.inf
    return logits
