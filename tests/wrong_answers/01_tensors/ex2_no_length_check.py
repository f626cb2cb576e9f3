"""01 exercise 2: lets zip drop the missing indices instead of raising ValueError.

Hint: zip silently drops the missing axis
"""

def element_address(index, shape, strides, offset=0):
    address = offset
    for axis, (i, n, s) in enumerate(zip(index, shape, strides)):
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range for axis {axis} of size {n}")
        address += (i % n) * s
    return address
