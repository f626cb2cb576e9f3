"""05 exercise 2: returns 0/1 integers instead of a bool mask.

Hint: expected a (3, 3) bool array
"""

import numpy as np


def causal_mask_with_offset(query_length, key_length, offset=None):
    if offset is None:
        offset = key_length - query_length
    return (np.arange(key_length)[None, :] <= np.arange(query_length)[:, None] + offset).astype(int)
