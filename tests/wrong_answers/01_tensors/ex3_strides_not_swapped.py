"""01 exercise 3: swaps the shape but not the strides.

Hint: the shape is swapped but the strides are not
"""

def transpose_view(a, dim0, dim1):
    shape = list(a.shape)
    shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
    return as_strided(a, shape=shape, strides=a.strides)
