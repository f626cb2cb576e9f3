"""07 exercise 4: renames without fsyncing the temporary file.

Hint: fsync the temporary file before the rename
"""

import os


def save_atomically(path, data):
    directory = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(directory, f".{os.path.basename(path)}.tmp-{os.getpid()}")

    with open(temporary, "wb") as file:
        file.write(data)
    os.replace(temporary, path)
    fd = os.open(directory, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
