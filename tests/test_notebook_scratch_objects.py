"""A learner's scratch objects keep working while the chapter runs on, and after a section is
re-run.

A learner makes a tensor (or a module, a generator, an optimizer) in a scratch cell early in a
chapter and reads on; whatever one made later can do, the early one must do too. That fails as
soon as a cell re-creates a class under a name already in use (``types.new_class``, a second
``class Tensor``): the early object keeps the old class. Each chapter that defines classes is run
here in a fresh kernel, started in a temporary folder holding only a copy of the notebook (as a
notebook downloaded from the website runs; importing this checkout's ``tensorlib``), with a probe
cell after every cell (``tests/_scratch_probe.py``), which

- checks after every cell that no class the chapter exports (a top-level ``class X`` in an
  exported cell) is bound to another class object than the first one, and records every call
  of ``types.new_class`` (no cell may contain one either);
- makes a scratch object right after the cell that defines its class (chapter 2: a Tensor,
  chapter 3: a Generator, chapter 4: a tiny Module with a Parameter, chapter 6: an SGD optimizer)
  and, at the end, runs the same operations on it and on one made then: the early one must not
  fail where the late one works, nor give another result;
- for chapters 2 and 4, re-runs one section in the same live kernel and checks the early
  objects again.

Cells are numbered from 1, as in the ``# %% book/NN_topic.ipynb, cell K`` markers of the
generated modules, and named by their first line.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
BOOK = REPO / "book"
PROBE_FILE = Path(__file__).resolve().parent / "_scratch_probe.py"
MARK = "TL-SCRATCH-REPORT "
SCRATCH_KINDS = {
    "02_autograd": ["tensor"],
    "03_init": ["generator"],
    "04_layers": ["module"],
    "06_optimizers": ["optimizer"],
}
# a level-2 header, number optional
RERUN_SECTION = {"02_autograd": "Arithmetic with broadcasting", "04_layers": "Linear"}
TIMEOUT = 600


def _source(cell: Any) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else str(cell["source"])


def _is_exported(source: str) -> bool:
    first = source.lstrip().split("\n", 1)[0].strip()
    return first.startswith("#| export") or first.startswith("#| default_exp")


def exported_classes(notebook: Any) -> list[str]:
    """The names of the top-level classes of the notebook's exported cells, in order."""
    names: list[str] = []
    for cell in notebook.cells:
        if cell.cell_type != "code" or not _is_exported(_source(cell)):
            continue
        try:
            tree = ast.parse(_source(cell))
        except SyntaxError:
            continue
        names += [
            node.name
            for node in tree.body
            if isinstance(node, ast.ClassDef) and node.name not in names
        ]
    return names


def _chapters_with_classes() -> list[str]:
    return [
        path.stem
        for path in sorted(BOOK.glob("[0-9][0-9]_*.ipynb"))
        if exported_classes(nbformat.read(path, as_version=4))
    ]


def section_cells(notebook: Any, title: str) -> list[int]:
    """The indices of the code cells of the level-2 section ``## [N.] title``, up to the next
    level-1 or -2 header."""
    start = re.compile(rf"^##\s+(\d+\.\s*)?{re.escape(title)}\b")
    inside, found = False, []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            headers = [line for line in _source(cell).splitlines() if re.match(r"^#{1,2}\s", line)]
            if any(start.match(line) for line in headers):
                inside = True
            elif headers and inside:
                break
        elif inside and cell.cell_type == "code":
            found.append(index)
    return found


def uses_new_class(source: str) -> bool:
    """Whether the code calls or imports ``types.new_class`` (comments and prose do not count)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics
        return "new_class(" in source
    return any(
        (isinstance(node, ast.Attribute) and node.attr == "new_class")
        or (isinstance(node, ast.Name) and node.id == "new_class")
        or (
            isinstance(node, ast.ImportFrom)
            and any(alias.name == "new_class" for alias in node.names)
        )
        for node in ast.walk(tree)
    )


def _label(cell: Any) -> str:
    lines = [line for line in _source(cell).splitlines() if line.strip()]
    return (lines[0][:70] if lines else "").replace("`", "'")


def probed_notebook(chapter: str) -> Any:
    """The chapter with the probe cells put in (see the module docstring)."""
    original = nbformat.read(BOOK / f"{chapter}.ipynb", as_version=4)
    labels = {
        number: _label(cell)
        for number, cell in enumerate(original.cells, start=1)
        if cell.cell_type == "code"
    }
    setup = (
        "import importlib.util as _tl_util\n"
        f"_tl_spec = _tl_util.spec_from_file_location('_tl_scratch_probe', {str(PROBE_FILE)!r})\n"
        "_tl_module = _tl_util.module_from_spec(_tl_spec)\n"
        "_tl_spec.loader.exec_module(_tl_module)\n"
        f"_tl_scratch_probe = _tl_module.Probe({exported_classes(original)!r}, "
        f"{SCRATCH_KINDS.get(chapter, [])!r}, {labels!r})\n"
        "del _tl_util, _tl_spec, _tl_module"
    )
    code = [
        (number, cell)
        for number, cell in enumerate(original.cells, start=1)
        if cell.cell_type == "code"
    ]
    cells = [
        nbformat.v4.new_code_cell(f"{setup}\n_tl_scratch_probe.before({code[0][0] if code else 0})")
    ]
    for position, (number, cell) in enumerate(code):
        upcoming = code[position + 1][0] if position + 1 < len(code) else 0
        cells.append(cell)
        cells.append(
            nbformat.v4.new_code_cell(
                f"_tl_scratch_probe.after({number}); _tl_scratch_probe.before({upcoming})"
            )
        )
    cells.append(nbformat.v4.new_code_cell("_tl_scratch_probe.finish('end')"))
    if chapter in RERUN_SECTION:
        title = RERUN_SECTION[chapter]
        indices = section_cells(original, title)
        assert indices, (
            f"book/{chapter}.ipynb has no section '## {title}' to re-run: update RERUN_SECTION in "
            "this test"
        )
        for index in indices:
            again = nbformat.from_dict(json.loads(json.dumps(original.cells[index])))
            again.metadata["tl_rerun_of"] = index + 1
            cells += [
                nbformat.v4.new_code_cell(f"_tl_scratch_probe.before({index + 1})"),
                again,
                nbformat.v4.new_code_cell(f"_tl_scratch_probe.after({index + 1}, rerun=True)"),
            ]
        cells.append(nbformat.v4.new_code_cell("_tl_scratch_probe.finish('rerun', rerun=True)"))
    cells.append(nbformat.v4.new_code_cell("_tl_scratch_probe.report()"))
    notebook = nbformat.v4.new_notebook()
    notebook.metadata = original.metadata
    notebook.cells = cells
    return notebook


def _errors(notebook: Any) -> dict[str, list[str]]:
    """The unexpected errors (cells not tagged ``raises-exception``), of the first run and of the
    re-run."""
    found: dict[str, list[str]] = {"run": [], "rerun": []}
    for cell in notebook.cells:
        if "raises-exception" in cell.metadata.get("tags", []):
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                rerun = cell.metadata.get("tl_rerun_of")
                where = (
                    f"cell {rerun} (`{_label(cell)}`), re-run,"
                    if rerun
                    else f"the cell `{_label(cell)}`"
                )
                found["rerun" if rerun else "run"].append(
                    f"{where} raised {output.get('ename')}: {output.get('evalue')}"
                )
    return found


def run_probed(chapter: str, load_tool: Callable[[str], ModuleType]) -> dict[str, Any]:
    """Run the probed chapter as a downloaded notebook runs; the probe's report and the cells'
    errors.

    The kernel starts in a fresh temporary folder that holds only a copy of the notebook (no
    ``book/``, no ``data/`` beside it): a chapter must need nothing but the installed package.
    """
    notebook = probed_notebook(chapter)
    path = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    with (
        tempfile.TemporaryDirectory(prefix=f"tl-{chapter}-") as folder,
        pytest.MonkeyPatch.context() as patch,
    ):
        shutil.copy(BOOK / f"{chapter}.ipynb", folder)
        # the kernel imports this checkout's tensorlib, as the editable install does
        patch.setenv("PYTHONPATH", path)
        load_tool("notebooks").execute(
            notebook, Path(folder), TIMEOUT, allow_errors=True, record_timing=False
        )
    errors = _errors(notebook)
    for output in notebook.cells[-1].get("outputs", []):
        text = "".join(output.get("text", ""))
        if MARK in text:
            return {**json.loads(text.split(MARK, 1)[1]), "errors": errors}
    raise AssertionError(f"book/{chapter}.ipynb: the probe printed no report; errors: {errors}")


def _message(chapter: str, what: str, lines: list[str], limit: int = 12) -> str:
    more = f"\n  ... and {len(lines) - limit} more" if len(lines) > limit else ""
    return f"book/{chapter}.ipynb: {what}:\n  " + "\n  ".join(lines[:limit]) + more


class _Chapter:
    """The tests of one chapter; a subclass per chapter, so that xdist's loadscope spreads the
    chapters."""

    chapter = ""

    @pytest.fixture(scope="class")
    @classmethod
    def report(cls, load_tool: Callable[[str], ModuleType]) -> dict[str, Any]:
        return run_probed(cls.chapter, load_tool)

    def test_no_cell_uses_types_new_class(self):
        notebook = nbformat.read(BOOK / f"{self.chapter}.ipynb", as_version=4)
        found = [
            f"cell {number} (`{_label(cell)}`)"
            for number, cell in enumerate(notebook.cells, start=1)
            if cell.cell_type == "code" and uses_new_class(_source(cell))
        ]
        assert not found, _message(
            self.chapter,
            "cells that call types.new_class (re-create a class instead of defining it once)",
            found,
        )

    def test_the_chapter_runs_with_the_probe(self, report):
        assert not report["errors"]["run"], _message(
            self.chapter, "cells fail when run with the probe", report["errors"]["run"]
        )

    def test_no_exported_class_is_recreated(self, report):
        found = report["rebound"] + report["new_class"]
        assert not found, _message(
            self.chapter, "a class the chapter exports is re-created while it runs", found
        )

    def test_early_objects_do_everything_late_ones_do(self, report):
        problems = report["problems"].get("end", [])
        assert not problems, _message(
            self.chapter,
            "at the end of the chapter, an early scratch object does not do what a late one does",
            problems,
        )
        assert set(report["early"]) == {
            _KIND_LABELS[kind] for kind in SCRATCH_KINDS.get(self.chapter, [])
        }


class _ChapterWithSectionRerun(_Chapter):
    """A chapter of which one section (RERUN_SECTION) is re-run in the live kernel at the end."""

    def test_re_running_a_section_keeps_early_objects_working(self, report):
        what = f"after re-running the section '{RERUN_SECTION[self.chapter]}' in the live kernel"
        assert not report["errors"]["rerun"], _message(
            self.chapter, f"{what}, cells fail", report["errors"]["rerun"]
        )
        problems = report["problems"].get("rerun", [])
        assert not problems, _message(
            self.chapter,
            f"{what}, an early scratch object does not do what a late one does",
            problems,
        )


_KIND_LABELS = {
    "tensor": "Tensor",
    "generator": "Generator",
    "module": "Module",
    "optimizer": "optimizer (SGD)",
}


class TestTensors(_Chapter):
    # defines no class; run so that every chapter is shown to run from any folder
    chapter = "01_tensors"


class TestAutograd(_ChapterWithSectionRerun):
    chapter = "02_autograd"


class TestInit(_Chapter):
    chapter = "03_init"


class TestLayers(_ChapterWithSectionRerun):
    chapter = "04_layers"


class TestAttention(_Chapter):
    chapter = "05_attention"


class TestOptimizers(_Chapter):
    chapter = "06_optimizers"


class TestCheckpointing(_Chapter):
    chapter = "07_checkpointing"


class TestGPT(_Chapter):
    chapter = "08_gpt"


def test_every_chapter_that_defines_classes_is_run():
    run = {
        cls.chapter
        for cls in (*_Chapter.__subclasses__(), *_ChapterWithSectionRerun.__subclasses__())
        if cls.chapter
    }
    assert set(_chapters_with_classes()) <= run, (
        f"add a test class for {sorted(set(_chapters_with_classes()) - run)}"
    )
    assert set(SCRATCH_KINDS) <= run
    assert {cls.chapter for cls in _ChapterWithSectionRerun.__subclasses__()} == set(RERUN_SECTION)


def test_the_source_check_finds_new_class_in_code_only():
    assert uses_new_class("import types\nT = types.new_class('T', ())")
    assert uses_new_class("from types import new_class")
    assert not uses_new_class("# never types.new_class: a class is defined once\nx = 1")


def test_the_sections_to_re_run_are_found():
    for chapter, title in RERUN_SECTION.items():
        notebook = nbformat.read(BOOK / f"{chapter}.ipynb", as_version=4)
        assert section_cells(notebook, title), f"book/{chapter}.ipynb has no section '## {title}'"


def test_the_probe_catches_a_re_created_class_and_a_stale_object(tmp_path, load_tool, monkeypatch):
    """A two-class toy chapter that re-creates its class the way grow() did: both checks fail,
    naming the cells."""
    toy = nbformat.v4.new_notebook()
    toy.cells = [
        nbformat.v4.new_code_cell(
            "#| export\nclass Tensor:\n    def __init__(self, data, requires_grad=False):\n        "
            "self.data = data"
        ),
        nbformat.v4.new_code_cell(
            "def tensor(data, requires_grad=False):\n    return Tensor(data, requires_grad)"
        ),
        nbformat.v4.new_code_cell(
            "import types\nTensor = types.new_class('Tensor', (Tensor,), {}, lambda ns: "
            "ns.update(__mul__=lambda a, b: a))"
        ),
    ]
    (tmp_path / "99_toy.ipynb").write_text(nbformat.writes(toy), encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.BOOK", tmp_path)
    monkeypatch.setitem(SCRATCH_KINDS, "99_toy", ["tensor"])
    report = run_probed("99_toy", load_tool)
    assert (
        report["rebound"]
        and "cell 3 (`import types`) binds `Tensor` to a new class object" in report["rebound"][0]
    )
    assert "replacing the one cell 1 (`#| export`) made" in report["rebound"][0]
    assert report["new_class"] == ["cell 3 (`import types`) calls types.new_class('Tensor', ...)"]
    assert report["early"] == {"Tensor": 2}
    problems = "\n".join(report["problems"]["end"])
    assert (
        "type(early) is not type(late)" in problems
        and "`x * x` fails on a Tensor made after cell 2" in problems
    )


def test_a_chapter_runs_in_a_folder_of_its_own(tmp_path, load_tool, monkeypatch):
    """A toy chapter that reads a file lying beside it in book/ fails: the kernel does not start in
    book/."""
    toy = nbformat.v4.new_notebook()
    toy.cells = [
        nbformat.v4.new_code_cell(
            "import os\nassert os.listdir('.') == ['99_toy.ipynb'], os.listdir('.')"
        ),
        nbformat.v4.new_code_cell("open('beside.txt').read()"),
    ]
    (tmp_path / "99_toy.ipynb").write_text(nbformat.writes(toy), encoding="utf-8")
    (tmp_path / "beside.txt").write_text("only in book/", encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.BOOK", tmp_path)
    report = run_probed("99_toy", load_tool)
    assert (
        len(report["errors"]["run"]) == 1 and "FileNotFoundError" in report["errors"]["run"][0]
    ), report["errors"]
