"""07 exercise 4: writes the file in place, with no rename at all.

Hint: rename with os.replace
"""

import os


def save_atomically(path, data):
    with open(path, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
