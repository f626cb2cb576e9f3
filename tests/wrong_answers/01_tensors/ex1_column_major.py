"""01 exercise 1: computes column-major strides (the first axis has stride 1).

Hint: are column-major strides
"""

def row_major_strides(shape, itemsize=1):
    strides, block = [], itemsize
    for size in shape:
        strides.append(block)
        block *= max(size, 1)
    return tuple(strides)
