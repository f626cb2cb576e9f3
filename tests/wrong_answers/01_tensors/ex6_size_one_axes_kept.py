"""01 exercise 6: compares strides across size-1 axes too.

Hint: a size-1 axis never matters
"""

import numpy as np


def reshape_can_view(shape, strides, new_shape):
    size = int(np.prod(shape))
    if size != int(np.prod(new_shape)):
        raise ValueError("different sizes")
    if size == 0 or len(shape) <= 1:
        return True
    if len([n for n in new_shape if n != 1]) >= len([n for n in shape if n != 1]):
        return all(
            strides[k] == shape[k + 1] * strides[k + 1] for k in range(len(shape) - 1)
        ) or len(new_shape) > len(shape)
    return all(strides[k] == shape[k + 1] * strides[k + 1] for k in range(len(shape) - 1))
