"""07 exercise 3: keeps the dict's order.

Hint: sort by the position of the dtype in DTYPE_ORDER first
"""

import math


def safetensors_header(tensors):
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        size = math.prod(shape) * ITEMSIZE[dtype]
        header[name] = {
            "dtype": dtype,
            "shape": list(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    return header
