"""05 exercise 2: `if not offset` treats offset=0 like None, so the explicit top-left alignment is
lost.

Hint: offset=0 is the top-left alignment
"""

import numpy as np


def causal_mask_with_offset(query_length, key_length, offset=None):
    if not offset:
        offset = key_length - query_length
    return np.arange(key_length)[None, :] <= np.arange(query_length)[:, None] + offset
