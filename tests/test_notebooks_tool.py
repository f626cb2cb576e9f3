"""Tests of tools/notebooks.py, the one place the notebook tools find notebooks and read cells."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def notebooks(load_tool):
    return load_tool("notebooks")


def test_find_notebooks_skips_build_output_caches_hidden_folders_and_nested_solutions(
    notebooks, tmp_path, nb
):
    keep = ["01_a.ipynb", "sub/02_b.ipynb"]
    skip = ["_build/x.ipynb", ".ipynb_checkpoints/01_a-checkpoint.ipynb", "solutions/01_a.ipynb",
            "__pycache__/c.ipynb", "node_modules/d.ipynb", ".hidden/e.ipynb", "sub/_build/f.ipynb"]
    for name in keep + skip:
        nb.write(tmp_path / name, [nb.md("# x")])
    (tmp_path / "notes.txt").write_text("not a notebook", encoding="utf-8")
    # links to folders are not followed
    os.symlink(tmp_path / "sub", tmp_path / "linked", target_is_directory=True)
    assert notebooks.find_notebooks(tmp_path) == [tmp_path / name for name in keep]


def test_cell_source_accepts_a_string_or_a_list_of_lines(notebooks):
    assert notebooks.cell_source({"source": ["a = 1\n", "b = 2"]}) == "a = 1\nb = 2"
    assert notebooks.cell_source({"source": "a = 1"}) == "a = 1"
    assert notebooks.cell_source({}) == ""


def test_every_tool_uses_the_shared_definitions(load_tool, notebooks):
    tools = Path(notebooks.__file__).parent
    for name in ("export", "hygiene", "exercises", "run_notebook"):
        text = (tools / f"{name}.py").read_text(encoding="utf-8")
        assert "from notebooks import" in text, name
        assert "def _source(" not in text and "def _cell_source(" not in text, (
            f"{name} defines its own cell-source helper"
        )
        assert "os.walk(" not in text and 'rglob("*.ipynb")' not in text, (
            f"{name} has its own notebook finder"
        )
        assert "AsyncKernelManager(" not in text, f"{name} starts its own kernel"


def test_execute_runs_a_notebook_in_its_folder(notebooks, tmp_path, nb):
    import nbformat

    path = nb.write(
        tmp_path / "run.ipynb", [nb.code("import os\nprint(os.path.basename(os.getcwd()))")]
    )
    notebook = nbformat.read(path, as_version=4)
    notebooks.execute(notebook, tmp_path, timeout=120)
    assert notebook.cells[0].outputs[0]["text"].strip() == tmp_path.name
