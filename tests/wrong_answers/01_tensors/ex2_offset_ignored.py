"""01 exercise 2: forgets the view's offset.

Hint: misses the offset 6
"""

def element_address(index, shape, strides, offset=0):
    if len(index) != len(shape):
        raise ValueError("wrong number of indices")
    for axis, (i, n) in enumerate(zip(index, shape)):
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range for axis {axis} of size {n}")
    return sum((i % n) * s for i, n, s in zip(index, shape, strides))
