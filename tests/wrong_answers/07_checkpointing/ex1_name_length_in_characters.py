"""07 exercise 1: the name's length prefix counts characters, not UTF-8 bytes.

Hint: counts UTF-8 bytes, not characters
"""

import struct
import numpy as np


def tlckpt_bytes(parameters):
    out = [b"TLCKPT\0\0", struct.pack("<III", 1, 0, len(parameters))]
    for name, array in parameters.items():
        array = np.asarray(array, dtype=np.float32)

        out.append(struct.pack("<I", len(name)) + name.encode("utf-8"))
        out.append(
            struct.pack(f"<I{array.ndim}IQ", array.ndim, *array.shape, array.size) + array.tobytes()
        )
    return b"".join(out)
