"""A chapter's exported cells import one another's modules, as the package's files do.

``tensorlib/nn/modules/linear.py`` starts with ``from tensorlib.nn.modules.module import Module``.
In the notebook that import must find the chapter's own ``Module``, not the installed package's
copy (a second class: a layer built on it would not register as a child of a model built from the
notebook's classes, and the chapter's checks would test the package instead of the cells above
them). A chapter that places a module's imports next to its code, after earlier cells of the
chapter have defined what it imports, therefore points those module names at the notebook in a
notebook-only cell near its top (every chapter but the first, which writes a single module)::

    this_notebook = sys.modules["__main__"]
    for module in ("nn.parameter", "nn.modules.module", ...):
        sys.modules[f"tensorlib.{module}"] = this_notebook

These tests read such a notebook and check that the cell names every module of the chapter that
one of the chapter's exported cells imports, and that it runs before the first such import. A
module added to the chapter without its line in that cell fails here, naming it.

They also check what the alias makes possible to get wrong: every cell, exported or not, that
imports from one of the chapter's modules, or from a package all of whose modules are the
chapter's (``from tensorlib.serialization import save_checkpoint``), must find it pointed at the
notebook, and every name it imports must be defined by a cell above it (with the alias, an import
of a name the notebook has not defined yet fails instead of quietly fetching the package's).
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


def test_the_chapters_whose_modules_import_each_other_point_them_at_themselves() -> None:
    names = [path.name for path in NOTEBOOKS]
    for chapter in ("02_autograd.ipynb", "03_init.ipynb", "04_layers.ipynb", "05_attention.ipynb", "06_optimizers.ipynb",
                    "07_checkpointing.ipynb", "08_gpt.ipynb"):
        assert chapter in names, f"book/{chapter} has no cell that points its modules at the notebook"


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


def _code_cells(path: Path) -> list[tuple[int, ast.Module]]:
    """Each code cell that parses as Python, numbered from 1 like the exporter's cells."""
    cells = []
    for number, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"], start=1):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if cell.get("cell_type") == "code":
            try:
                cells.append((number, ast.parse(source)))
            except SyntaxError:
                continue
    return cells


def _top_level_names(tree: ast.Module) -> set[str]:
    """The names a cell binds in the notebook's namespace (not those inside its functions)."""
    names: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if isinstance(node, ast.Lambda):
            continue
        pending.extend(ast.iter_child_nodes(node))
    return names


def _attributes_set_on_the_notebook(tree: ast.Module) -> set[str]:
    """``x`` for each ``this_notebook.x = ...`` (a submodule name pointed at the notebook too)."""
    return {
        target.attr
        for node in ast.walk(tree) if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "this_notebook"
    }


def _imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """The imports a cell runs, each with whether it runs later (inside a function) rather than now.

    Imports under ``if TYPE_CHECKING:`` never run and are left out.
    """
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []
    pending: list[tuple[ast.AST, bool]] = [(tree, False)]
    while pending:
        node, deferred = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append((node, deferred))
            continue
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            pending += [(child, deferred) for child in node.orelse]
            continue
        inner = deferred or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        pending += [(child, inner) for child in ast.iter_child_nodes(node)]
    return found


def _problems_of_imports(label: str, cells: list[tuple[int, ast.Module]], own: set[str]) -> list[str]:
    """What goes wrong with a notebook's imports of its own modules ``own``, one line each."""
    aliases = [(number, tree) for number, tree in cells if _aliased_modules(ast.unparse(tree))]
    if not aliases:
        return [f"{label}: no cell points the chapter's modules at the notebook"]
    alias_cell, alias_tree = aliases[0]
    aliased = _aliased_modules(ast.unparse(alias_tree))
    attributes = _attributes_set_on_the_notebook(alias_tree)
    problems, defined = [], {}
    for number, tree in cells:
        for node, deferred in _imports(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in own:
                if node.module not in aliased or number < alias_cell:
                    problems.append(f"{label}, cell {number}: imports from {node.module}, which cell {alias_cell} "
                                    f"{'points at the notebook only after it' if node.module in aliased else 'does not point at the notebook'}")
                    continue
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    if submodule in own and alias.name not in attributes:
                        problems.append(f"{label}, cell {number}: `from {node.module} import {alias.name}` needs "
                                        f"`this_notebook.{alias.name} = this_notebook` in cell {alias_cell}")
                    elif submodule not in own and alias.name not in defined and not deferred:
                        problems.append(f"{label}, cell {number}: imports {alias.name} from {node.module} "
                                        "before any cell above it defines it")
            elif isinstance(node, ast.Import):
                problems += [f"{label}, cell {number}: imports {alias.name}, which cell {alias_cell} does not point at the notebook"
                             for alias in node.names if alias.name in own and alias.name not in aliased]
        for name in _top_level_names(tree):
            defined.setdefault(name, number)
    return problems


def _own_modules_and_packages(notebook: str, modules: dict) -> set[str]:
    """The chapter's modules, and each package whose generated modules all come from the chapter."""
    written = {f"tensorlib.{name}" for name, module in modules.items() if module.notebook == notebook}
    everyone = {f"tensorlib.{name}" for name in modules}
    packages = {name.rsplit(".", depth)[0] for name in written for depth in range(1, name.count("."))}
    return written | {package for package in packages if all(m in written for m in everyone if m.startswith(package + "."))}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_every_cell_imports_the_notebook_s_own_names_after_their_definition(
    path: Path, load_tool: Callable[[str], ModuleType]
) -> None:
    export = load_tool("export")
    modules = export.collect_modules(REPO / "book", REPO)
    label = path.relative_to(REPO).as_posix()
    problems = _problems_of_imports(label, _code_cells(path), _own_modules_and_packages(label, modules))
    assert not problems, "\n".join(problems)


def test_the_import_checker_finds_each_kind_of_mistake() -> None:
    own = {"tensorlib.ser", "tensorlib.ser.reader", "tensorlib.ser.fmt"}

    def problems(*sources: str) -> list[str]:
        return _problems_of_imports("nb", [(n, ast.parse(s)) for n, s in enumerate(sources, start=1)], own)

    alias = 'for module in ("ser", "ser.reader", "ser.fmt"):\n    sys.modules[f"tensorlib.{module}"] = this_notebook\n'
    fine = ("class Error(ValueError): pass\ndef decode(b): pass", "from tensorlib.ser.reader import Error\nfrom tensorlib.ser import decode")
    assert problems(alias, *fine) == []
    assert "before any cell above it defines it" in problems(alias, "from tensorlib.ser.reader import Error", fine[0])[0]
    assert "does not point at the notebook" in problems(alias.replace('"ser", ', ""), *fine)[0]
    assert "only after it" in problems(fine[0], fine[1], alias)[0]
    assert "this_notebook.fmt = this_notebook" in problems(alias, "from tensorlib.ser import fmt")[0]
    assert problems(alias + "this_notebook.fmt = this_notebook\n", "from tensorlib.ser import fmt") == []
    later = "if TYPE_CHECKING:\n    from tensorlib.ser.reader import Later\ndef f():\n    from tensorlib.ser.reader import Later\n"
    assert problems(alias, later, "class Later: pass") == []


def test_the_alias_reader_reads_both_forms() -> None:
    loop = 'import sys\nfor module in ("nn.a", "nn.b"):\n    sys.modules[f"tensorlib.{module}"] = sys.modules["__main__"]\n'
    assert _aliased_modules(loop) == {"tensorlib.nn.a", "tensorlib.nn.b"}
    single = 'import sys\nsys.modules["tensorlib.nn.c"] = sys.modules["__main__"]\n'
    assert _aliased_modules(single) == {"tensorlib.nn.c"}
    assert _aliased_modules("x = sys.modules['__main__']\n") == set()
