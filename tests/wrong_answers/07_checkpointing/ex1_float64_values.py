"""07 exercise 1: writes the values as float64.

Hint: the values are float32
"""

import struct
import numpy as np


def tlckpt_bytes(parameters):
    out = [b"TLCKPT\0\0", struct.pack("<III", 1, 0, len(parameters))]
    for name, array in parameters.items():
        array = np.asarray(array, dtype=np.float32)

        raw = name.encode("utf-8")
        out.append(struct.pack("<I", len(raw)) + raw)
        out.append(
            struct.pack(f"<I{array.ndim}IQ", array.ndim, *array.shape, array.size)
            + array.astype("<f8").tobytes()
        )
    return b"".join(out)
