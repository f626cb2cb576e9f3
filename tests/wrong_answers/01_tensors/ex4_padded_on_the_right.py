"""01 exercise 4: pads the shorter shape with 1s on the right.

Hint: pad the shorter shape with 1s on the left
"""

def broadcast_two(x_shape, y_shape):
    ndim = max(len(x_shape), len(y_shape))
    x_padded = tuple(x_shape) + (1,) * (ndim - len(x_shape))
    y_padded = tuple(y_shape) + (1,) * (ndim - len(y_shape))
    result = []
    for n, m in zip(x_padded, y_padded):
        if n != m and n != 1 and m != 1:
            raise ValueError(f"shapes {tuple(x_shape)} and {tuple(y_shape)} cannot be broadcast")
        result.append(m if n == 1 else n)
    return tuple(result)
