"""07 exercise 4: creates the temporary file in the system's temporary directory.

Hint: the temporary file must be in the target's directory
"""

import os
import tempfile


def save_atomically(path, data):
    fd, temporary = tempfile.mkstemp()
    with os.fdopen(fd, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
