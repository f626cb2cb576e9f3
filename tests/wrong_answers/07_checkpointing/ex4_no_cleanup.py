"""07 exercise 4: leaves the temporary file behind when the rename fails.

Hint: remove the temporary file when the save fails
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
    fd = os.open(directory, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
