"""07 exercise 3: counts the offsets in elements instead of bytes.

Hint: data_offsets count bytes
"""

import math


def safetensors_header(tensors):
    header, offset = {}, 0
    for name in sorted(tensors, key=lambda n: (DTYPE_ORDER.index(tensors[n][0]), n)):
        dtype, shape = tensors[name]
        size = math.prod(shape)
        header[name] = {
            "dtype": dtype,
            "shape": list(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    return header
