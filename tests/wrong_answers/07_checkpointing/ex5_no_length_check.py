"""07 exercise 5: unpacks the trailer without checking the length: struct.error on short input.

Hint: check len(data) >= 4
"""

import struct
import zlib


def add_crc32(data):
    return data + struct.pack("<I", zlib.crc32(data))


def strip_crc32(data):
    body, (stored,) = data[:-4], struct.unpack("<I", data[-4:])
    if zlib.crc32(body) != stored:
        raise ValueError(f"CRC-32 mismatch: {stored:#010x} != {zlib.crc32(body):#010x}")
    return body
