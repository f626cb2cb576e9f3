"""07 exercise 5: computes the checksum but returns without comparing it.

Hint: was not detected
"""

import struct
import zlib


def add_crc32(data):
    return data + struct.pack("<I", zlib.crc32(data))


def strip_crc32(data):
    if len(data) < 4:
        raise ValueError("too short")
    zlib.crc32(data[:-4])
    return data[:-4]
