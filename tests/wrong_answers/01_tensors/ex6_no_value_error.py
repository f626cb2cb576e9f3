"""01 exercise 6: returns False instead of raising ValueError for a different number of elements.

Hint: should raise ValueError
"""

import numpy as np


def reshape_can_view(shape, strides, new_shape):
    size = int(np.prod(shape))
    if size != int(np.prod(new_shape)):
        return False
    if size == 0:
        return True
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    new = [n for n in new_shape if n != 1]
    i = j = 0
    while i < len(old):
        i2, j2 = i + 1, j + 1
        old_size, new_size = old[i][0], new[j]
        while old_size != new_size:
            if old_size < new_size:
                old_size *= old[i2][0]
                i2 += 1
            else:
                new_size *= new[j2]
                j2 += 1
        for k in range(i, i2 - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return False
        i, j = i2, j2
    return True
