"""The public surface of tensorlib and the API reference pages generated from it.

Public means re-exported by a hand-written ``__init__.py``: a package's ``__all__`` when it has
one, otherwise every name its ``from ... import ...`` statements bind (``tensorlib`` itself). A
re-exported module (``tensorlib.autograd``, ``tensorlib.nn.init``) makes its own ``__all__``
public too. Every public object is documented once, where it is defined (its *canonical* name,
``tensorlib.engine.softmax``), and the entry lists the public names it goes by
(``tensorlib.softmax``).

The reference has one page per chapter, ``book/reference/NN_topic.rst`` (generated, gitignored),
with one section per module of that chapter in the order the chapter exports them, and the
objects of a module in source order. Each entry is rendered by Sphinx autodoc (signature and
docstring) and links to the section of the chapter that derives it: the exporter writes a
``# %% book/NN_topic.ipynb, cell K`` marker above every exported cell, and the website's
extension (``tools/sphinx_tensorlib.py``) gives the chapter section holding cell K the label
``tl-derive-NN_topic-K``. So a new chapter's modules appear in the reference, linked to their
derivations, without hand work.

Used by ``tools/sphinx_tensorlib.py`` at build time and by ``tests/test_reference.py``.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import json
import pkgutil
import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "tensorlib"
GENERATED_FROM = re.compile(r"^# Generated from book/(?P<notebook>[\w.-]+)\.ipynb")
CELL_MARKER = re.compile(r"^# %% book/(?P<notebook>[\w.-]+)\.ipynb, cell (?P<cell>\d+)\s*$")


def derive_label(notebook: str, cell: int) -> str:
    """The label of the chapter section holding exported cell ``cell`` (1-based, as in the
    markers)."""
    return f"tl-derive-{notebook}-{cell}".lower()


@dataclass
class Entry:
    """One documented object: where it is defined and the public names it goes by."""

    canonical: str  # tensorlib.engine.softmax
    module: str  # tensorlib.engine
    name: str  # softmax (the name in its module)
    kind: str  # function, class, data, module
    obj: Any = field(repr=False)
    aliases: list[str] = field(default_factory=list)  # tensorlib.softmax, ...
    line: int = 0  # where it is defined in the module's file (0: unknown)
    derived_in: tuple[str, int] | None = None  # (notebook stem, cell number)

    @property
    def docstring(self) -> str:
        if self.kind == "data":
            own = self.obj.__doc__ if type(self.obj).__module__.startswith(PACKAGE) else None
            return inspect.cleandoc(own or "")
        return inspect.getdoc(self.obj) or ""


@dataclass
class ModuleInfo:
    name: str  # tensorlib.nn.init
    notebook: str  # 03_init
    first_cell: int
    entries: list[Entry] = field(default_factory=list)


def _import_bindings(path: Path, package: str) -> list[tuple[str, str, str]]:
    """(bound name, source module, name in the source module) for each ``from X import a as b``
    of the package ``package``'s ``__init__.py`` (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bindings = []
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
            continue
        if node.level:
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            module = f"{base}.{node.module}" if node.module else base
        else:
            module = node.module or ""
        for alias in node.names:
            if alias.name != "*":
                bindings.append((alias.asname or alias.name, module, alias.name))
    return bindings


def _packages(package: types.ModuleType) -> list[types.ModuleType]:
    """The package and every subpackage (a folder with a hand-written ``__init__.py``)."""
    found = [package]
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.ispkg:
            found.append(importlib.import_module(info.name))
    return found


def public_names(package_name: str = PACKAGE) -> dict[str, Any]:
    """Every public name (``tensorlib.nn.Linear``) and its object, in a stable order."""
    package = importlib.import_module(package_name)
    names: dict[str, Any] = {}
    for pkg in _packages(package):
        exported = getattr(pkg, "__all__", None)
        if exported is None:
            exported = [bound for bound, _, _ in _import_bindings(Path(pkg.__file__), pkg.__name__)]
        for name in exported:
            if name.startswith("_"):
                continue
            obj = getattr(pkg, name)
            names[f"{pkg.__name__}.{name}"] = obj
            if isinstance(obj, types.ModuleType) and not hasattr(obj, "__path__"):
                for inner in getattr(obj, "__all__", []):
                    names[f"{obj.__name__}.{inner}"] = getattr(obj, inner)
    return names


def _top_level_lines(path: Path) -> dict[str, int]:
    """The line where each top-level def, class or assignment of a module starts."""
    lines: dict[str, int] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines.setdefault(node.name, node.lineno)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    lines.setdefault(target.id, node.lineno)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            lines.setdefault(node.target.id, node.lineno)
    return lines


def _markers(path: Path) -> list[tuple[int, str, int]]:
    """(line, notebook stem, cell number) of every ``# %%`` marker in a generated module."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = CELL_MARKER.match(line)
        if match:
            found.append((number, match["notebook"], int(match["cell"])))
    return found


def _cell_at(markers: list[tuple[int, str, int]], line: int) -> tuple[str, int] | None:
    before = [(notebook, cell) for at, notebook, cell in markers if at <= line]
    return before[-1] if before else None


def _canonical(obj: Any, public: str) -> tuple[str, str, str]:
    """(kind, module, name) of the place an object is defined."""
    if isinstance(obj, types.ModuleType):
        return "module", obj.__name__, obj.__name__
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if (
        (inspect.isfunction(obj) or inspect.isclass(obj))
        and isinstance(module, str)
        and module.startswith(PACKAGE)
        and qualname
        and getattr(sys.modules.get(module), qualname, None) is obj
    ):
        return ("class" if inspect.isclass(obj) else "function"), module, qualname
    # Data (dtypes, constants, instances): defined where the __init__ imports it from.
    return "data", "", public.rsplit(".", 1)[1]


def collect(package_name: str = PACKAGE) -> list[ModuleInfo]:
    """The reference: modules in chapter order, each with its public objects in source order."""
    names = public_names(package_name)
    package = importlib.import_module(package_name)
    # Where each re-exported datum comes from: the ``from X import name`` in an __init__.py.
    sources: dict[str, tuple[str, str]] = {}
    for pkg in _packages(package):
        for bound, module, original in _import_bindings(Path(pkg.__file__), pkg.__name__):
            sources[f"{pkg.__name__}.{bound}"] = (module, original)

    entries: dict[str, Entry] = {}
    for public, obj in names.items():
        kind, module, name = _canonical(obj, public)
        if kind == "module":
            continue
        if kind == "data":
            module, name = sources.get(public, (public.rsplit(".", 1)[0], name))
            # Through re-exporting packages (tensorlib.engine/__init__.py) to the defining module.
            for _ in range(10):
                if f"{module}.{name}" not in sources or not hasattr(
                    sys.modules.get(module), "__path__"
                ):
                    break
                module, name = sources[f"{module}.{name}"]
            # A module's own __all__ entry (tensorlib.random.default_generator) or an alias.
            if getattr(sys.modules.get(module), name, None) is not obj:
                module, name = public.rsplit(".", 1)
        # One entry per defining name: tensorlib.float is tensorlib.engine.float32 imported under
        # another name, so it is an alias of that entry.
        key = f"{module}.{name}"
        entry = entries.get(key)
        if entry is None:
            entry = entries[key] = Entry(f"{module}.{name}", module, name, kind, obj)
        if public != entry.canonical and public not in entry.aliases:
            entry.aliases.append(public)

    modules: dict[str, ModuleInfo] = {}
    for entry in entries.values():
        info = modules.get(entry.module)
        path = Path(sys.modules[entry.module].__file__)
        if info is None:
            header = path.read_text(encoding="utf-8").splitlines()[:1]
            match = GENERATED_FROM.match(header[0]) if header else None
            markers = _markers(path)
            info = modules[entry.module] = ModuleInfo(
                entry.module,
                match["notebook"] if match else "",
                markers[0][2] if markers else 0,
            )
        entry.line = _top_level_lines(path).get(entry.name, 0)
        if entry.kind != "data" and not entry.line:
            entry.line = inspect.getsourcelines(entry.obj)[1]
        entry.derived_in = _cell_at(_markers(path), entry.line) if entry.line else None
        info.entries.append(entry)
    for info in modules.values():
        info.entries.sort(key=lambda e: (e.line or 10**9, e.name))
    # Names defined in a hand-written __init__.py (no chapter) come last, on a page of their own.
    for info in modules.values():
        info.notebook = info.notebook or "package"
    return sorted(modules.values(), key=lambda m: (m.notebook, m.first_cell, m.name))


def missing_docstrings(modules: list[ModuleInfo]) -> list[str]:
    """Public functions and classes without a docstring of their own."""
    return [
        entry.canonical
        for info in modules
        for entry in info.entries
        if entry.kind in ("function", "class") and not (entry.obj.__doc__ or "").strip()
    ]


def chapter_titles(book: Path) -> dict[str, str]:
    """Each chapter notebook's title (its first ``# `` heading), by stem."""
    titles = {}
    for path in sorted(book.glob("[0-9][0-9]_*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        for cell in notebook.get("cells", []):
            if cell.get("cell_type") != "markdown":
                continue
            source = "".join(cell.get("source", []))
            heading = next(
                (line[2:].strip() for line in source.splitlines() if line.startswith("# ")), None
            )
            if heading:
                titles[path.stem] = heading
                break
        titles.setdefault(path.stem, path.stem)
    return titles


def _documented_classes(modules: list[ModuleInfo]) -> set[type]:
    return {entry.obj for info in modules for entry in info.entries if entry.kind == "class"}


def _shown_members(cls: type, documented: set[type]) -> dict[str, Any]:
    """The public methods and properties a class's entry shows, in definition order.

    A member shows where it is defined, or on the first documented class that inherits it
    from undocumented bases (a private base class). A member that a documented base class has
    is left to that base.
    """
    owned_elsewhere: set[type] = {object}
    for base in cls.__mro__[1:]:
        if base in documented:
            owned_elsewhere |= set(base.__mro__)
    defined_in: dict[str, type] = {}
    for base in cls.__mro__:
        for name in vars(base):
            defined_in.setdefault(name, base)
    members: dict[str, Any] = {}
    for base in reversed([b for b in cls.__mro__ if b not in owned_elsewhere]):
        for name, value in vars(base).items():
            if defined_in[name] is not base or name.startswith("_") or name in members:
                continue
            if isinstance(value, (types.FunctionType, classmethod, staticmethod, property)):
                members[name] = value
    return members


def _rst_literal(text: str) -> str:
    return f"``{text}``"


def _entry_rst(entry: Entry, labels: set[str], documented: set[type]) -> list[str]:
    if entry.kind == "function":
        lines = [f".. autofunction:: {entry.canonical}"]
    elif entry.kind == "class":
        lines = [f".. autoclass:: {entry.canonical}"]
        members = _shown_members(entry.obj, documented)
        if members:
            lines += ["   :members: " + ", ".join(members), "   :undoc-members:"]
    else:
        lines = [f".. py:data:: {entry.name}", f"   :module: {entry.module}"]
        if not isinstance(entry.obj, (types.FunctionType, type)):
            value = repr(entry.obj)
            if len(value) < 80 and "\n" not in value:
                lines.append(f"   :value: {value}")
    lines.append("")
    body = []
    if entry.kind == "data":
        doc = entry.docstring.split("\n\n")[0].replace("\n", " ")
        what = (
            f"An instance of :class:`{type(entry.obj).__module__}.{type(entry.obj).__qualname__}`"
            if (type(entry.obj).__module__.startswith(PACKAGE))
            else f"The object ``{entry.obj!r}``"
        )
        body.append(f"{what}." + (f" {doc}" if doc else ""))
        body.append("")
    notes = []
    if entry.aliases:
        notes.append("Public as " + ", ".join(_rst_literal(a) for a in entry.aliases) + ".")
    if entry.derived_in is not None:
        label = derive_label(*entry.derived_in)
        if label in labels or not labels:
            notes.append(f"Derived in :ref:`{label}`.")
    if notes:
        body.append(" ".join(notes))
    lines += ["   " + line if line else "" for line in body]
    lines.append("")
    return lines


def chapter_pages(
    modules: list[ModuleInfo], titles: dict[str, str], labels: set[str] | None = None
) -> dict[str, str]:
    """The reference pages, ``{file name: reStructuredText}``, one per chapter (``01_tensors.rst``).

    ``labels``: the derivation labels that exist (an empty set links every entry).
    """
    documented = _documented_classes(modules)
    by_chapter: dict[str, list[ModuleInfo]] = {}
    for info in modules:
        by_chapter.setdefault(info.notebook, []).append(info)
    pages = {}
    for notebook, infos in by_chapter.items():
        number = notebook.split("_", 1)[0].lstrip("0") or "0"
        title = f"Chapter {number}: " + titles.get(notebook, notebook).split(":")[0]
        intro = (
            f"The public names of the modules that :doc:`../{notebook}` exports, in the order the "
            "chapter writes them. Each entry links to the section that derives it."
        )
        if notebook not in titles:
            title, intro = (
                "The package",
                "Public names defined in the package's own ``__init__.py`` files.",
            )
        lines = [
            ".. This page is generated by tools/api_reference.py at build time; do not edit it.",
            "",
            f".. _tl-reference-{notebook}:",
            "",
            title,
            "=" * len(title),
            "",
            intro,
            "",
        ]
        for info in infos:
            heading = _rst_literal(info.name)
            lines += [heading, "-" * len(heading), "", f".. automodule:: {info.name}", ""]
            for entry in info.entries:
                lines += _entry_rst(entry, labels or set(), documented)
        pages[f"{notebook}.rst"] = "\n".join(lines).rstrip() + "\n"
    return pages


def packages_page(modules: list[ModuleInfo], package_name: str = PACKAGE) -> tuple[str, str]:
    """The reference's first page, ``00_packages.rst``: each package's docstring and public names.

    This is where to look a name up by the way it is imported (``tl.nn.Linear``): every public
    name of a package, linked to its entry on the chapter pages.
    """
    canonical = {}
    for info in modules:
        for entry in info.entries:
            for name in [entry.canonical, *entry.aliases]:
                canonical[name] = entry
    names = public_names(package_name)
    title = "Packages and their public names"
    lines = [
        ".. This page is generated by tools/api_reference.py at build time; do not edit it.",
        "",
        title,
        "=" * len(title),
        "",
        "Every public name of ``tensorlib``, by the package that exports it; each links to its "
        "entry on the chapter pages.",
        "",
    ]
    for pkg in _packages(importlib.import_module(package_name)):
        heading = _rst_literal(pkg.__name__)
        lines += [heading, "-" * len(heading), "", f".. automodule:: {pkg.__name__}", ""]
        rows = []
        for public, obj in names.items():
            if public.rsplit(".", 1)[0] != pkg.__name__:
                continue
            short = public.rsplit(".", 1)[1]
            if isinstance(obj, types.ModuleType):
                rows.append(f"- :py:mod:`{short} <{obj.__name__}>` (module)")
            elif public in canonical:
                entry = canonical[public]
                role = {"function": "func", "class": "class", "data": "data"}[entry.kind]
                rows.append(f"- :py:{role}:`{short} <{entry.canonical}>`")
        if rows:
            lines += ["Public names:", "", *rows, ""]
    return "00_packages.rst", "\n".join(lines).rstrip() + "\n"


def link_targets(modules: list[ModuleInfo]) -> dict[str, tuple[str, str]]:
    """How inline code in the book names an entry: ``{text: (py role, canonical target)}``.

    Every public name (``tensorlib.nn.Linear``), its usual spellings (``tl.nn.Linear``,
    ``nn.Linear``, ``F.softmax`` for ``tensorlib.nn.functional``), the canonical name, and the
    bare name (``Linear``) when it names one entry only and is neither a Python builtin nor a
    method's or attribute's name (``backward``, ``grad``). Methods are reached as
    ``Class.method`` and modules by their dotted name.
    """
    targets: dict[str, tuple[str, str]] = {}
    bare: dict[str, set[tuple[str, str]]] = {}
    documented = _documented_classes(modules)

    def spellings(public: str) -> list[str]:
        short = public.removeprefix(PACKAGE + ".")
        found = [public, "tl." + short]
        if short.startswith("nn.functional."):
            found += ["F." + short.removeprefix("nn.functional.")]
        if short.startswith("nn."):
            found += [short]
        return found

    for pkg in _packages(importlib.import_module(PACKAGE)):
        targets[pkg.__name__] = ("mod", pkg.__name__)
        targets["tl" + pkg.__name__.removeprefix(PACKAGE)] = ("mod", pkg.__name__)
    for info in modules:
        targets[info.name] = ("mod", info.name)
        for entry in info.entries:
            role = {"function": "func", "class": "class", "data": "data"}[entry.kind]
            for public in [entry.canonical, *entry.aliases]:
                for text in spellings(public):
                    targets.setdefault(text, (role, entry.canonical))
            for name in {entry.name, *(a.rsplit(".", 1)[1] for a in entry.aliases)}:
                bare.setdefault(name, set()).add((role, entry.canonical))
            if entry.kind == "class":
                for member, value in _shown_members(entry.obj, documented).items():
                    member_role = "attr" if isinstance(value, property) else "meth"
                    member_target = (member_role, f"{entry.canonical}.{member}")
                    for public in [entry.canonical, *entry.aliases]:
                        for text in spellings(public):
                            targets.setdefault(f"{text}.{member}", member_target)
                    targets.setdefault(f"{entry.name}.{member}", member_target)
    # A bare name that is also a method or attribute (``backward``, ``grad``, ``reshape``) may
    # mean either: only the dotted spellings link.
    member_names = {name for cls in documented for name in dir(cls)}  # slots and methods
    for name, found in bare.items():
        if (
            len(found) == 1
            and name not in vars(builtins)
            and name not in targets
            and name not in member_names
        ):
            targets[name] = next(iter(found))
    return targets


def write_pages(pages: dict[str, str], folder: Path) -> list[Path]:
    """Write the pages (only those that changed), remove stale ``.rst`` pages; return the written
    ones."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in pages.items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    for stale in folder.glob("*.rst"):
        if stale.name not in pages:
            stale.unlink()
    return written
