"""07 exercise 5: appends the checksum big-endian.

Hint: the trailer is zlib.crc32(data) as '<I'
"""

import struct
import zlib


def add_crc32(data):
    return data + struct.pack(">I", zlib.crc32(data))


def strip_crc32(data):
    if len(data) < 4:
        raise ValueError("too short")
    body, (stored,) = data[:-4], struct.unpack(">I", data[-4:])
    if zlib.crc32(body) != stored:
        raise ValueError("CRC-32 mismatch")
    return body
