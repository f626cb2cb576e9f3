"""01 exercise 4: raises a ValueError that does not name the shapes.

Hint: should name both shapes
"""

def broadcast_two(x_shape, y_shape):
    ndim = max(len(x_shape), len(y_shape))
    x_padded = (1,) * (ndim - len(x_shape)) + tuple(x_shape)
    y_padded = (1,) * (ndim - len(y_shape)) + tuple(y_shape)
    result = []
    for n, m in zip(x_padded, y_padded):
        if n != m and n != 1 and m != 1:
            raise ValueError("cannot broadcast")
        result.append(m if n == 1 else n)
    return tuple(result)
