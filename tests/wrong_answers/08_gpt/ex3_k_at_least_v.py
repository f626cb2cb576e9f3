"""08 exercise 3: indexes np.sort(...)[:, -k] even when k > V.

Hint: k >= V keeps everything
"""

import numpy as np


def top_k_filter(logits, k):
    kth = np.sort(logits, axis=-1)[:, -k][:, None]
    return np.where(logits < kth, -np.inf, logits)
