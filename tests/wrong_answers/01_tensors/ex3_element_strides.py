"""01 exercise 3: passes strides in elements to as_strided, which wants bytes.

Hint: count elements, but as_strided takes bytes
"""

def transpose_view(a, dim0, dim1):
    shape, strides = list(a.shape), [s // a.itemsize for s in a.strides]
    shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
    strides[dim0], strides[dim1] = strides[dim1], strides[dim0]
    return as_strided(a, shape=shape, strides=strides)
