"""08 exercise 3: keeps exactly k indices from argsort, dropping ties.

Hint: instead of keeping k indices from argsort
"""

import numpy as np


def top_k_filter(logits, k):
    out = np.full_like(logits, -np.inf)
    top = np.argsort(logits, axis=-1)[:, -k:]
    np.put_along_axis(out, top, np.take_along_axis(logits, top, axis=-1), axis=-1)
    return out
