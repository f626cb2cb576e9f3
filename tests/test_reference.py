"""The API reference and the figures' accessibility, checked without building the site.

``tools/api_reference.py`` finds tensorlib's public names (what the hand-written ``__init__.py``
files re-export) and writes the reference pages the website builds (``tests/test_site.py``
checks the built pages). Here: every public name has an entry, a docstring and a link to the
chapter that derives it; every figure in a notebook has a caption and alt text.
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import api_reference  # noqa: E402


@pytest.fixture(scope="module")
def modules() -> list[api_reference.ModuleInfo]:
    return api_reference.collect()


@pytest.fixture(scope="module")
def pages(modules: list[api_reference.ModuleInfo]) -> dict[str, str]:
    return api_reference.chapter_pages(modules, api_reference.chapter_titles(ROOT / "book"))


def test_public_names_are_what_the_init_files_export() -> None:
    names = api_reference.public_names()
    import tensorlib as tl

    for public in ["tensorlib.Tensor", "tensorlib.softmax", "tensorlib.float32", "tensorlib.float",
                   "tensorlib.nn.Linear", "tensorlib.nn.functional.cross_entropy",
                   "tensorlib.autograd.gradcheck", "tensorlib.nn.init.kaiming_normal_",
                   "tensorlib.manual_seed"]:
        assert public in names, f"{public} is missing from the public names"
    assert names["tensorlib.nn.Linear"] is tl.nn.Linear
    # Modules imported as a side effect (tensorlib.shape) are not re-exports; private names never
    # are.
    assert "tensorlib.shape" not in names and "tensorlib.engine" not in names
    assert not [name for name in names if name.rsplit(".", 1)[1].startswith("_")]


def test_every_public_name_has_a_reference_entry(modules, pages) -> None:
    documented = {}
    for info in modules:
        for entry in info.entries:
            for name in [entry.canonical, *entry.aliases]:
                documented[name] = entry
    # a package of re-exports only (tensorlib.linalg) has its automodule on the packages page
    text = "\n".join([*pages.values(), api_reference.packages_page(modules)[1]])
    missing = []
    for public, obj in api_reference.public_names().items():
        if isinstance(obj, types.ModuleType):
            if f".. automodule:: {public}" not in text and not any(
                info.name.startswith(public + ".") for info in modules
            ):
                missing.append(public)
            continue
        entry = documented.get(public)
        if entry is None:
            missing.append(public)
            continue
        directive = (
            f".. py:data:: {entry.name}\n   :module: {entry.module}"
            if entry.kind == "data"
            else f":: {entry.canonical}\n"
        )
        if directive not in text:
            missing.append(f"{public} (its entry {entry.canonical} is not on any page)")
    assert missing == [], "public names without a reference entry: " + ", ".join(missing)


def test_every_public_function_and_class_has_a_docstring(modules) -> None:
    missing = api_reference.missing_docstrings(modules)
    assert missing == [], "public names without a docstring: " + ", ".join(missing)


def test_the_docstring_check_can_fail() -> None:
    def undocumented(x):
        return x

    entry = api_reference.Entry(
        "tensorlib.x.undocumented", "tensorlib.x", "undocumented", "function", undocumented
    )
    info = api_reference.ModuleInfo("tensorlib.x", "09_x", 1, [entry])
    assert api_reference.missing_docstrings([info]) == ["tensorlib.x.undocumented"]


def test_every_entry_links_to_the_cell_that_derives_it(modules, pages) -> None:
    unlinked = [
        entry.canonical
        for info in modules
        for entry in info.entries
        if entry.kind in ("function", "class") and entry.derived_in is None
    ]
    assert unlinked == [], f"entries with no '# %% book/...' marker above them: {unlinked}"
    linear = next(e for info in modules for e in info.entries if e.canonical.endswith(".Linear"))
    notebook, cell = linear.derived_in
    cells = json.loads((ROOT / "book" / f"{notebook}.ipynb").read_text())["cells"]
    source = cells[cell - 1]["source"]
    assert "class Linear(" in "".join(source), "the marker's cell number is not the notebook's cell"
    assert f":ref:`{api_reference.derive_label(notebook, cell)}`" in pages[f"{notebook}.rst"]


def test_reference_pages_follow_chapter_order(modules, pages) -> None:
    order = [info.notebook for info in modules]
    assert order == sorted(order), "modules are not grouped in chapter order"
    assert list(pages) == sorted(pages) and "04_layers.rst" in pages
    text = pages["04_layers.rst"]
    assert text.index("tensorlib.nn.modules.module") < text.index("tensorlib.nn.functional.layers")
    # Every module the package's notebooks generate is covered once.
    package = importlib.import_module("tensorlib")
    assert package.__name__ == "tensorlib"
    assert len({info.name for info in modules}) == len(modules)


def test_inline_names_resolve_to_entries(modules) -> None:
    import tensorlib as tl

    targets = api_reference.link_targets(modules)

    def defined(obj: object) -> str:
        return f"{obj.__module__}.{obj.__qualname__}"

    assert targets["tl.softmax"] == ("func", defined(tl.softmax))
    assert targets["nn.Linear"] == ("class", defined(tl.nn.Linear))
    assert targets["F.cross_entropy"] == ("func", defined(tl.nn.functional.cross_entropy))
    assert targets["Tensor.backward"][1].endswith(".Tensor.backward")
    assert targets["tensorlib.nn.init"] == ("mod", "tensorlib.nn.init")
    assert targets["tl.nn"] == ("mod", "tensorlib.nn")
    # Python's builtins are never linked by their bare name (``sum``, ``float``).
    assert "sum" not in targets and "float" not in targets and "Linear" in targets
    # A bare name that is also a method's (Tensor.backward, Tensor.grad) is ambiguous.
    assert "backward" not in targets and "grad" not in targets


# ---------------------------------------------------------------------------------------------
# Figures: a caption and alt text for every image a notebook shows (CONTRIBUTING.md).


def figure_problems(path: Path, root: Path = ROOT) -> list[str]:
    """Every code cell with an image output but no ``mystnb`` caption or alt text."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    for number, cell in enumerate(notebook.get("cells", []), start=1):
        if cell.get("cell_type") != "code":
            continue
        images = [
            key
            for output in cell.get("outputs", [])
            for key in output.get("data", {})
            if key.startswith("image/")
        ]
        if not images:
            continue
        options = cell.get("metadata", {}).get("mystnb", {})
        lacking = [
            what
            for what, value in (
                ("caption", options.get("figure", {}).get("caption")),
                ("alt text", options.get("image", {}).get("alt")),
            )
            if not str(value or "").strip()
        ]
        if lacking:
            problems.append(
                f"{path.relative_to(root)}, cell {number}: no {' and no '.join(lacking)}"
            )
    return problems


NOTEBOOKS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb")) + sorted(
    (ROOT / "solutions").glob("*.ipynb")
)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_figure_has_a_caption_and_alt_text(path: Path) -> None:
    problems = figure_problems(path)
    assert problems == [], (
        "figures without a caption or alt text (add cell metadata "
        '{"mystnb": {"figure": {"caption": ...}, "image": {"alt": ...}}}, see CONTRIBUTING.md):\n'
        + "\n".join(problems)
    )


def test_the_figure_check_can_fail(tmp_path: Path) -> None:
    image = {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}, "metadata": {}}
    cell = {
        "cell_type": "code",
        "source": "plot()",
        "metadata": {},
        "outputs": [image],
        "execution_count": 1,
    }
    good = {
        **cell,
        "metadata": {"mystnb": {"figure": {"caption": "A plot."}, "image": {"alt": "A line."}}},
    }
    path = tmp_path / "sample.ipynb"
    path.write_text(
        json.dumps({"cells": [cell, good], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    assert figure_problems(path, tmp_path) == ["sample.ipynb, cell 1: no caption and no alt text"]


# ---------------------------------------------------------------------------------------------
# The website extension's text helpers (tools/sphinx_tensorlib.py).


@pytest.fixture(scope="module")
def extension():
    pytest.importorskip("sphinx")
    import sphinx_tensorlib

    return sphinx_tensorlib


def test_export_directives_are_split_from_the_code(extension) -> None:
    directives, code = extension._split_directives(
        "#| default_exp nn.init\n#| export\nimport math\n#| not a directive"
    )
    assert directives == [["default_exp", "nn.init"], ["export"]]
    assert code == "import math\n#| not a directive"
    assert extension._split_directives("x = 1") == ([], "x = 1")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "Shapes: input (*, in_features), output (*, out)",
            r"Shapes: input (\*, in_features), "
            r"output (\*, out)",
        ),
        ("two ``where``s, then ``Clamp``; done", r"two ``where``\ s, then ``Clamp``; done"),
        ("an *emphasis* and **strong** stay", "an *emphasis* and **strong** stay"),
        ("``(*, 3)`` and :math:`a*b` stay", "``(*, 3)`` and :math:`a*b` stay"),
        (r"already \*escaped", r"already \*escaped"),
    ],
)
def test_docstring_lines_become_valid_restructuredtext(extension, line: str, expected: str) -> None:
    assert extension._clean_docstring_line(line) == expected


def test_several_names_in_one_field_lose_their_spaces(extension) -> None:
    lines = [":ivar n_layer, n_head, n_embd: sizes", ":param x: one"]
    extension._clean_docstring(None, "attribute", "name", None, None, lines)
    assert lines == [":ivar n_layer,n_head,n_embd: sizes", ":param x: one"]
