"""01 exercise 2: never raises IndexError.

Hint: is out of range for its axis
"""

def element_address(index, shape, strides, offset=0):
    if len(index) != len(shape):
        raise ValueError("wrong number of indices")
    return offset + sum((i % n) * s for i, n, s in zip(index, shape, strides))
