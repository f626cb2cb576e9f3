"""05 exercise 1: the scores are divided by d instead of sqrt(d).

Hint: row 0 (scores (1, 0, 1)/√2)
"""

import numpy as np


def attention_weights(q, k):
    scores = q @ k.T / q.shape[-1]
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
