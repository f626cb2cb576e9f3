"""07 exercise 2: reads each field without checking it fits: struct.error on a truncated file.

Hint: check that each field fits in the bytes left
"""

import math
import struct
import numpy as np


def locate_damage(data):
    def fits(at, size):
        return True

    if len(data) < 8 or data[:8] != b"TLCKPT\0\0":
        return 0
    for at, want in ((8, 1), (12, 0)):
        if not fits(at, 4) or struct.unpack_from("<I", data, at)[0] != want:
            return at
    if not fits(16, 4):
        return 16
    count = struct.unpack_from("<I", data, 16)[0]
    at = 20
    for _ in range(count):
        if not fits(at, 4):
            return at
        length = struct.unpack_from("<I", data, at)[0]
        at += 4
        if not fits(at, length):
            return at
        at += length
        if not fits(at, 4):
            return at
        ndim = struct.unpack_from("<I", data, at)[0]
        at += 4
        if not fits(at, 4 * ndim):
            return at
        dims = struct.unpack_from(f"<{ndim}I", data, at)
        at += 4 * ndim
        if not fits(at, 8):
            return at
        elements = struct.unpack_from("<Q", data, at)[0]
        if elements != math.prod(dims):
            return at
        at += 8
        if not fits(at, 4 * elements):
            return at
        values = np.frombuffer(data, "<f4", elements, at)
        if not np.isfinite(values).all():
            return at + 4 * int(np.flatnonzero(~np.isfinite(values))[0])
        at += 4 * elements
    return at if at != len(data) else -1
