"""01 exercise 4: takes the larger size on every axis, so 0 against 1 gives 1.

Hint: a size 1 stretches to the other size, even to 0
"""

def broadcast_two(x_shape, y_shape):
    ndim = max(len(x_shape), len(y_shape))
    x_padded = (1,) * (ndim - len(x_shape)) + tuple(x_shape)
    y_padded = (1,) * (ndim - len(y_shape)) + tuple(y_shape)
    result = []
    for n, m in zip(x_padded, y_padded):
        if n != m and n != 1 and m != 1:
            raise ValueError(f"shapes {tuple(x_shape)} and {tuple(y_shape)} cannot be broadcast")
        result.append(max(n, m))
    return tuple(result)
