"""01 exercise 1: gives the strides in elements, not bytes.

Hint: counts elements; these strides are in bytes
"""

def strides_by_hand():
    return (12, 4, 1), (3, 3, 1), (1,), ()
