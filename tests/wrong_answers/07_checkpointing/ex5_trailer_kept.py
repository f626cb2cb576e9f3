"""07 exercise 5: returns the data with its trailer still on.

Hint: strip_crc32 returns the data without the trailer
"""

import struct
import zlib


def add_crc32(data):
    return data + struct.pack("<I", zlib.crc32(data))


def strip_crc32(data):
    if len(data) < 4:
        raise ValueError("too short")
    if zlib.crc32(data[:-4]) != struct.unpack("<I", data[-4:])[0]:
        raise ValueError("CRC-32 mismatch")
    return data
