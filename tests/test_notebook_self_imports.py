"""A chapter's exported cells import one another's modules, as the package's files do.

``tensorlib/nn/modules/linear.py`` starts with ``from tensorlib.nn.modules.module import Module``.
In the notebook that import must find the chapter's own ``Module``, not the installed package's
copy (a second class: a layer built on it would not register as a child of a model built from the
notebook's classes, and the chapter's checks would test the package instead of the cells above
them). A chapter that places a module's imports next to its code, after earlier cells of the
chapter have defined what it imports, therefore points those module names at the notebook in a
notebook-only cell near its top (chapters 2 and 4)::

    this_notebook = sys.modules["__main__"]
    for module in ("nn.parameter", "nn.modules.module", ...):
        sys.modules[f"tensorlib.{module}"] = this_notebook

These tests read such a notebook and check that the cell names every module of the chapter that
one of the chapter's exported cells imports, and that it runs before the first such import. A
module added to the chapter without its line in that cell fails here, naming it.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent


def _aliased_modules(source: str) -> set[str]:
    """The ``tensorlib.*`` names a cell points at the notebook through ``sys.modules[...] = ...``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.iter, (ast.Tuple, ast.List)):
            assigns = [n for n in ast.walk(node) if isinstance(n, ast.Assign)]
            if any(_is_sys_modules_item(t) for a in assigns for t in a.targets):
                prefix = _fstring_prefix(assigns)
                names |= {prefix + e.value for e in node.iter.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if _is_sys_modules_item(target) and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
                    names.add(target.slice.value)
    return {name for name in names if name.startswith("tensorlib.")}


def _is_sys_modules_item(target: ast.expr) -> bool:
    return isinstance(target, ast.Subscript) and ast.unparse(target.value) == "sys.modules"


def _fstring_prefix(assigns: list[ast.Assign]) -> str:
    """The constant start of ``sys.modules[f"tensorlib.{module}"]``: ``"tensorlib."``."""
    for assign in assigns:
        for target in assign.targets:
            if _is_sys_modules_item(target) and isinstance(target.slice, ast.JoinedStr):
                first = target.slice.values[0] if target.slice.values else None
                if isinstance(first, ast.Constant):
                    return str(first.value)
    return ""


def _self_imports(notebook: str, modules: dict) -> dict[str, int]:
    """Each module of ``notebook`` that its exported cells import, with the first importing cell."""
    own = {f"tensorlib.{name}" for name, module in modules.items() if module.notebook == notebook}
    first: dict[str, int] = {}
    for module in modules.values():
        if module.notebook != notebook:
            continue
        for cell in module.cells:
            for node in ast.walk(ast.parse(cell.source)):
                imported = []
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    imported = [node.module]
                elif isinstance(node, ast.Import):
                    imported = [alias.name for alias in node.names]
                for name in imported:
                    if name in own:
                        first[name] = min(first.get(name, cell.cell_number), cell.cell_number)
    return first


def _alias_cells(path: Path) -> list[tuple[int, set[str]]]:
    from_notebook = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for number, cell in enumerate(from_notebook["cells"], start=1):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if cell.get("cell_type") == "code" and "sys.modules[" in source:
            names = _aliased_modules(source)
            if names:
                found.append((number, names))
    return found


NOTEBOOKS = [path for path in sorted((REPO / "book").glob("[0-9][0-9]_*.ipynb")) if _alias_cells(path)]


def test_the_layers_chapter_points_its_modules_at_itself() -> None:
    assert "04_layers.ipynb" in [path.name for path in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_every_self_import_finds_the_notebook(path: Path, load_tool: Callable[[str], ModuleType]) -> None:
    export = load_tool("export")
    modules = export.collect_modules(REPO / "book", REPO)
    label = path.relative_to(REPO).as_posix()
    imports = _self_imports(label, modules)
    (alias_cell, aliased), *others = _alias_cells(path)
    assert not others, f"{label}: one cell should point the chapter's modules at the notebook, found cells {alias_cell} and {[n for n, _ in others]}"
    missing = sorted(set(imports) - aliased)
    assert not missing, (
        f"{label}, cell {alias_cell}: exported cells import {missing} (first in cells "
        f"{[imports[name] for name in missing]}), but the cell does not point them at the notebook; add them to its list"
    )
    too_late = {name: cell for name, cell in imports.items() if cell < alias_cell}
    assert not too_late, f"{label}: cells {sorted(set(too_late.values()))} import {sorted(too_late)} before cell {alias_cell} points them at the notebook"
    written = {f"tensorlib.{name}" for name, module in modules.items() if module.notebook == label}
    packages = {name.rsplit(".", depth)[0] for name in written for depth in range(1, name.count("."))}  # tensorlib.engine
    strangers = sorted(aliased - written - packages)
    assert not strangers, f"{label}, cell {alias_cell}: points {strangers} at the notebook, but the notebook does not write them"


def test_the_alias_reader_reads_both_forms() -> None:
    loop = 'import sys\nfor module in ("nn.a", "nn.b"):\n    sys.modules[f"tensorlib.{module}"] = sys.modules["__main__"]\n'
    assert _aliased_modules(loop) == {"tensorlib.nn.a", "tensorlib.nn.b"}
    single = 'import sys\nsys.modules["tensorlib.nn.c"] = sys.modules["__main__"]\n'
    assert _aliased_modules(single) == {"tensorlib.nn.c"}
    assert _aliased_modules("x = sys.modules['__main__']\n") == set()
