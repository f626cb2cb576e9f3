"""01 exercise 2: uses negative indices as they are.

Hint: negative indices count from the end
"""

def element_address(index, shape, strides, offset=0):
    if len(index) != len(shape):
        raise ValueError("wrong number of indices")
    for axis, (i, n) in enumerate(zip(index, shape)):
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range for axis {axis} of size {n}")
    return offset + sum(i * s for i, s in zip(index, strides))
