"""05 exercise 2: the offset is ignored: always the top-left alignment (PyTorch's is_causal).

Hint: that is the top-left alignment
"""

import numpy as np


def causal_mask_with_offset(query_length, key_length, offset=None):
    return np.tril(np.ones((query_length, key_length), dtype=bool))
