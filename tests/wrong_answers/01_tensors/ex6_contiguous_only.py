"""01 exercise 6: answers whether the view is contiguous.

Hint: a view that is not contiguous can still reshape without a copy
"""

import numpy as np


def reshape_can_view(shape, strides, new_shape):
    if int(np.prod(shape)) != int(np.prod(new_shape)):
        raise ValueError("different sizes")
    expected, block = [], 1
    for n in reversed(shape):
        expected.append(block)
        block *= max(n, 1)
    return int(np.prod(shape)) == 0 or tuple(strides) == tuple(reversed(expected))
