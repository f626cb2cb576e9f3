"""05 exercise 1: the softmax without subtracting each row's maximum, which overflows for large
scores.

Hint: subtract each row's maximum before np.exp
"""

import numpy as np


def attention_weights(q, k):
    e = np.exp(q @ k.T / np.sqrt(q.shape[-1]))
    return e / e.sum(axis=-1, keepdims=True)
