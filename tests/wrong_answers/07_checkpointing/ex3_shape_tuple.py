"""07 exercise 3: stores the shape as a tuple.

Hint: the shape is a JSON list
"""

import math


def safetensors_header(tensors):
    header, offset = {}, 0
    for name in sorted(tensors, key=lambda n: (DTYPE_ORDER.index(tensors[n][0]), n)):
        dtype, shape = tensors[name]
        size = math.prod(shape) * ITEMSIZE[dtype]
        header[name] = {
            "dtype": dtype,
            "shape": tuple(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    return header
