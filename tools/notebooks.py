"""What the notebook tools share: finding notebooks, reading cells, clean metadata, running a
kernel.

The tools in this folder (``export.py``, ``hygiene.py``, ``exercises.py``, ``run_notebook.py``)
are scripts, not a package; each puts this folder on ``sys.path`` and imports from here, so that
there is one definition of each of these:

- ``find_notebooks(folder)``: every ``.ipynb`` under a folder, sorted, skipping build output
  (``_build``), editor and cache folders (``.ipynb_checkpoints``, ``__pycache__``,
  ``node_modules``, any hidden folder) and a ``solutions`` folder nested inside it (the book's
  ``book/solutions`` is a link to the solution notebooks, for the website). Links to folders
  are not followed.
- ``cell_source(cell)``: a cell's source as one string (nbformat allows a string or a list of
  lines).
- ``KERNELSPEC`` and ``LANGUAGE_INFO``: the only notebook metadata a committed notebook keeps.
- ``execute(notebook, workdir, timeout, allow_errors=...)``: run every cell in a fresh kernel.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python"}
SKIPPED_DIRS = frozenset(
    {"_build", ".ipynb_checkpoints", "solutions", "__pycache__", "node_modules"}
)


def cell_source(cell: dict) -> str:
    """The source of a cell as one string, whether stored as a string or as a list of lines."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def find_notebooks(folder: Path) -> list[Path]:
    """Every notebook under ``folder``, sorted, without the skipped folders (see the module
    docstring)."""
    found = []
    for current, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(
            name for name in dirnames if name not in SKIPPED_DIRS and not name.startswith(".")
        )
        found.extend(Path(current) / name for name in filenames if name.endswith(".ipynb"))
    return sorted(found)


def execute(
    notebook: Any,
    workdir: Path,
    timeout: int,
    *,
    allow_errors: bool = False,
    record_timing: bool = True,
) -> None:
    """Run every code cell of ``notebook`` (an nbformat node, changed in place) in a fresh kernel.

    The kernel starts in ``workdir`` and talks over Unix sockets (IPC) in a private folder:
    nothing listens on TCP, so ipykernel has no reason to warn about unencrypted TCP. A cell
    error raises ``nbclient.exceptions.CellExecutionError`` unless ``allow_errors``; the kernel
    is shut down either way.
    """
    # imported here: finding and reading notebooks needs no kernel
    from jupyter_client import AsyncKernelManager
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="tl-kernel-") as sockets:
        client = NotebookClient(
            notebook,
            km=AsyncKernelManager(
                kernel_name="python3", transport="ipc", ip=str(Path(sockets) / "k")
            ),
            timeout=timeout,
            kernel_name="python3",
            allow_errors=allow_errors,
            record_timing=record_timing,
            resources={"metadata": {"path": str(Path(workdir).resolve())}},
        )
        client.execute(cleanup_kc=True)  # we made the manager, so we shut its kernel down
