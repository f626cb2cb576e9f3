"""A chapter's exported cells replayed in a fresh namespace that stands in for its notebook.

Used by the concept tests that check, in-process and fast, that objects a chapter makes early keep
working after every later cell (tests/test_notebook_scratch_objects.py does the same in a kernel).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from tensorlib._notebook import chapter_modules, point_modules_at_notebook

BOOK = Path(__file__).resolve().parent.parent / "book"


def chapter_exported_cells(chapter: str) -> list[str]:
    """The sources of the chapter's exported cells, in notebook order."""
    notebook = json.loads((BOOK / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    sources = ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    return [source for source in sources if source.startswith(("#| export", "#| default_exp"))]


@contextmanager
def replayed_chapter(chapter: str, name: str) -> Iterator[tuple[ModuleType, list[str]]]:
    """A fresh module ``name`` with the chapter's modules pointed at it, and the chapter's exported
    cells.

    ``sys.modules`` is restored afterwards.
    """
    notebook = ModuleType(name)
    saved = {module: sys.modules.get(module) for module in [*chapter_modules(chapter), name]}
    sys.modules[name] = notebook  # as __main__ is (dataclasses look their module up)
    point_modules_at_notebook(chapter, notebook)
    try:
        yield notebook, chapter_exported_cells(chapter)
    finally:
        for module, value in saved.items():
            if value is None:
                sys.modules.pop(module, None)
            else:
                sys.modules[module] = value
