"""01 exercise 1: computes column-major strides (the first axis has stride 1).

Hint: row_major_strides((2, 3), itemsize=1)
"""

def row_major_strides(shape, itemsize=1):
    strides, block = [], itemsize
    for size in shape:
        strides.append(block)
        block *= max(size, 1)
    return tuple(strides)
