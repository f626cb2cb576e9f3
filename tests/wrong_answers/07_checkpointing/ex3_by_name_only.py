"""07 exercise 3: sorts by name only.

Hint: sort by the position of the dtype in DTYPE_ORDER first
"""

import math


def safetensors_header(tensors):
    header, offset = {}, 0
    for name in sorted(tensors):
        dtype, shape = tensors[name]
        size = math.prod(shape) * ITEMSIZE[dtype]
        header[name] = {
            "dtype": dtype,
            "shape": list(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    return header
