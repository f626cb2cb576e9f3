"""A chapter's exported cells import one another's modules, as the package's files do.

``tensorlib/nn/modules/linear.py`` starts with ``from tensorlib.nn.modules.module import Module``;
run in the chapter's notebook, that import must find the notebook's own ``Module``, not the
installed package's copy. Every chapter whose cells import its own modules therefore calls
``point_modules_at_notebook("NN_name")`` (``tensorlib._notebook``) with its own file name, in a
cell before the first such import; the module names come from the generated modules' headers.
These tests check that call in every chapter, and the two functions themselves.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

import tensorlib
from tensorlib._notebook import chapter_modules, point_modules_at_notebook

REPO = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((REPO / "book").glob("[0-9][0-9]_*.ipynb"))
CALL = "point_modules_at_notebook"


def _code_cells(path: Path) -> list[tuple[int, ast.Module]]:
    """Each code cell that parses, numbered from 1 as the exporter numbers them."""
    cells = []
    for number, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"], start=1):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "code":
            try:
                cells.append((number, ast.parse(source)))
            except SyntaxError:  # IPython magics: no import of the chapter's modules there
                continue
    return cells


def _imported_modules(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def _pointing_calls(tree: ast.Module) -> list[object]:
    """The arguments of each ``point_modules_at_notebook(...)`` call in a cell (None when not a
    constant)."""
    return [
        node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == CALL
    ]


def pointing_problems(
    chapter: str, cells: list[tuple[int, ast.Module]], exported: set[int], own: set[str]
) -> list[str]:
    """What is wrong with how a chapter points its modules ``own`` at itself, one line each.

    ``cells`` are the chapter's code cells (number, tree), ``exported`` the numbers of its exported
    cells. Nothing is needed unless an exported cell imports one of ``own``; then a cell before the
    first import of one of ``own`` (by any cell) must call ``point_modules_at_notebook(chapter)``.
    """
    first_import = {number: sorted(_imported_modules(tree) & own) for number, tree in cells}
    first_import = {number: names for number, names in first_import.items() if names}
    if not any(number in exported for number in first_import):
        return []
    calls = [(number, argument) for number, tree in cells for argument in _pointing_calls(tree)]
    wrong = [
        f"{chapter}, cell {number}: calls {CALL}({argument!r}), not {CALL}({chapter!r})"
        for number, argument in calls
        if argument != chapter
    ]
    if wrong:
        return wrong
    first, names = min(first_import.items())
    if not calls:
        return [
            f"{chapter}: cell {first} imports {names[0]}, one of the chapter's own modules, but no "
            f"cell calls {CALL}({chapter!r})"
        ]
    if calls[0][0] >= first:
        return [
            f"{chapter}: cell {first} imports {names[0]} before cell {calls[0][0]} calls "
            f"{CALL}({chapter!r})"
        ]
    return []


@functools.cache
def _collected(export: ModuleType) -> dict:
    return export.collect_modules(REPO / "book", REPO)


def _own_modules(
    chapter: Path, load_tool: Callable[[str], ModuleType]
) -> tuple[set[str], set[int]]:
    """The modules and packages the chapter writes (from its export directives), and its exported
    cells."""
    modules = _collected(load_tool("export"))
    label = chapter.relative_to(REPO).as_posix()
    written = {f"tensorlib.{name}" for name, module in modules.items() if module.notebook == label}
    others = {f"tensorlib.{name}" for name, module in modules.items() if module.notebook != label}
    packages = {
        name.rsplit(".", depth)[0] for name in written for depth in range(1, name.count("."))
    }
    whole = {
        package
        for package in packages
        if not any(other.startswith(package + ".") for other in others)
    }
    exported = {
        cell.cell_number
        for module in modules.values()
        if module.notebook == label
        for cell in module.cells
    }
    return written | whole, exported


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_a_chapter_that_imports_its_own_modules_points_them_at_itself_first(chapter, load_tool):
    own, exported = _own_modules(chapter, load_tool)
    problems = pointing_problems(chapter.stem, _code_cells(chapter), exported, own)
    assert not problems, "\n".join(problems)


def test_the_chapters_with_modules_that_import_each_other_are_found(load_tool):
    """The check above is not vacuous: chapter 4's layers import its Module, chapter 7's files each
    other."""
    needing = set()
    for chapter in CHAPTERS:
        own, exported = _own_modules(chapter, load_tool)
        if any(
            _imported_modules(tree) & own
            for number, tree in _code_cells(chapter)
            if number in exported
        ):
            needing.add(chapter.stem)
    assert {"04_layers", "07_checkpointing"} <= needing, needing


def test_the_checker_finds_each_kind_of_mistake():
    own = {"tensorlib.ser", "tensorlib.ser.reader"}

    def problems(*sources: str, exported: set[int] | None = None) -> list[str]:
        cells = [(number, ast.parse(source)) for number, source in enumerate(sources, start=1)]
        return pointing_problems(
            "07_ser",
            cells,
            exported if exported is not None else set(range(1, len(sources) + 1)),
            own,
        )

    call, uses = 'point_modules_at_notebook("07_ser")', "from tensorlib.ser.reader import Error"
    assert problems(call, "class Error(Exception): pass", uses) == []
    assert "no cell calls" in problems("class Error(Exception): pass", uses)[0]
    assert "before cell 2 calls" in problems(uses, call)[0]
    assert (
        "not point_modules_at_notebook('07_ser')"
        in problems('point_modules_at_notebook("07_other")', uses)[0]
    )
    assert problems(uses, exported=set()) == []  # only plain cells import it: nothing to point


# -- the two functions
# ------------------------------------------------------------------------------------
def test_chapter_modules_names_the_chapters_modules_and_only_whole_packages():
    layers = chapter_modules("04_layers")
    assert "tensorlib.nn.modules.module" in layers and "tensorlib.nn.parameter" in layers
    assert "tensorlib.nn.modules" not in layers, (
        "tensorlib.nn.modules also holds chapter 5's rnn and attention"
    )
    assert "tensorlib.nn" not in layers and "tensorlib.nn.modules.rnn" not in layers
    assert layers == sorted(layers)
    checkpointing = chapter_modules("07_checkpointing")
    assert (
        "tensorlib.serialization" in checkpointing
        and "tensorlib.serialization.reader" in checkpointing
    )
    assert "tensorlib.utils.data" in layers, "tensorlib.utils.data is chapter 4's whole package"
    for name in layers:
        path = Path(importlib.import_module(name).__file__)
        # a whole package's __init__ is hand-written (re-exports only)
        if path.name == "__init__.py":
            continue
        assert path.read_text(encoding="utf-8").startswith(
            "# Generated from book/04_layers.ipynb "
        ), name


@pytest.mark.parametrize("name", ["04_layers.ipynb", "book/04_layers", "4_layers", "layers", ""])
def test_a_name_that_is_not_a_chapter_raises_naming_the_expected_form(name):
    assert chapter_modules(name) == []
    with pytest.raises(ValueError, match=r"without \.ipynb \(e\.g\. '02_autograd'\)"):
        point_modules_at_notebook(name, ModuleType("fake_notebook"))


@pytest.fixture
def restored_modules() -> Iterator[None]:
    """Put back every ``sys.modules`` entry the test changes."""
    saved = dict(sys.modules)
    try:
        yield
    finally:
        for name in set(sys.modules) - set(saved):
            del sys.modules[name]
        sys.modules.update(saved)


def test_pointing_sets_sys_modules_and_attributes_of_pointed_parents_only(restored_modules):
    real_serialization = importlib.import_module("tensorlib.serialization")
    real_reader = importlib.import_module("tensorlib.serialization.reader")
    notebook = ModuleType("fake_notebook")
    names = point_modules_at_notebook("07_checkpointing", notebook)
    assert names == chapter_modules("07_checkpointing")
    assert all(sys.modules[name] is notebook for name in names)
    assert notebook.reader is notebook, (
        "the parent tensorlib.serialization is the notebook: it gets the attribute"
    )
    assert real_serialization.reader is real_reader, (
        "the installed package's own attributes are left alone"
    )
    assert tensorlib.serialization is real_serialization
    assert not hasattr(notebook, "serialization"), "tensorlib itself is not pointed at the notebook"
    with pytest.raises(ImportError, match="ByteReader"):
        # the fake notebook defines none
        from tensorlib.serialization.reader import ByteReader  # noqa: F401


def test_an_import_of_a_name_the_notebook_lacks_fails_at_once(restored_modules):
    notebook = ModuleType("fake_notebook")
    notebook.Parameter = object
    point_modules_at_notebook("04_layers", notebook)
    from tensorlib.nn.parameter import Parameter

    assert Parameter is object
    with pytest.raises(ImportError):
        from tensorlib.nn.modules.module import Module  # noqa: F401
    assert not hasattr(notebook, "module") and not hasattr(notebook, "parameter"), (
        "tensorlib.nn.modules and tensorlib.nn are not pointed"
    )


def test_the_default_notebook_is_main(restored_modules):
    names = point_modules_at_notebook("08_gpt")
    assert {sys.modules[name] for name in names} == {sys.modules["__main__"]}
