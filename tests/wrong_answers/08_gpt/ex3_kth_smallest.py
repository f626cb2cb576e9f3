"""08 exercise 3: compares with the k-th smallest instead of the k-th largest.

Hint: that was the k-th smallest
"""

import numpy as np


def top_k_filter(logits, k):
    if k >= logits.shape[-1]:
        return logits.copy()
    kth = np.sort(logits, axis=-1)[:, k - 1][:, None]
    return np.where(logits < kth, -np.inf, logits)
