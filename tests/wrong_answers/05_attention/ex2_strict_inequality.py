"""05 exercise 2: a query may not attend its own position (j < i instead of j <= i).

Hint: with T_q = T_k the mask is the lower triangle
"""

import numpy as np


def causal_mask_with_offset(query_length, key_length, offset=None):
    if offset is None:
        offset = key_length - query_length
    return np.arange(key_length)[None, :] < np.arange(query_length)[:, None] + offset
