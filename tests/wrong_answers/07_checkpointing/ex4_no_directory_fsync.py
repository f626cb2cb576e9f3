"""07 exercise 4: does not fsync the directory after the rename.

Hint: fsync the directory after the rename
"""

import os


def save_atomically(path, data):
    directory = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(directory, f".{os.path.basename(path)}.tmp-{os.getpid()}")

    with open(temporary, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
