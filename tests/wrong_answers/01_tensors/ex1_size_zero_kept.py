"""01 exercise 1: multiplies by a size 0 as it is, so the axes before it get stride 0.

Hint: a size 0 counts as 1
"""

def row_major_strides(shape, itemsize=1):
    strides, block = [], itemsize
    for size in reversed(shape):
        strides.append(block)
        block *= size
    return tuple(reversed(strides))
