"""Tests of tools/exercises.py on small solution notebooks written by the tests."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

SOLUTION_CODE = '''import math


def area(r: float) -> float:
    """Area of a circle of radius ``r``."""
    if r < 0:
        raise ValueError(f"r must be >= 0, got {r}")
    ### BEGIN SOLUTION
    squared = r * r
    return math.pi * squared
    ### END SOLUTION


class Shape:
    def perimeter(self, r: float) -> float:
        for _ in range(1):
            ### BEGIN SOLUTION
            return 2 * math.pi * r
            ### END SOLUTION'''

EXERCISE_CODE = '''import math


def area(r: float) -> float:
    """Area of a circle of radius ``r``."""
    if r < 0:
        raise ValueError(f"r must be >= 0, got {r}")
    raise NotImplementedError("Exercise: write the body of area().")


class Shape:
    def perimeter(self, r: float) -> float:
        for _ in range(1):
            raise NotImplementedError("Exercise: write the body of Shape.perimeter().")'''

GOOD_CHECK = (
    'assert abs(area(2.0) - 4 * math.pi) < 1e-12, f"area(2.0) should be 4 pi, got '
    '{area(2.0)}"\nprint("Exercise 1 passed")'
)
METHOD_CHECK = (
    'assert abs(Shape().perimeter(1.0) - 2 * math.pi) < 1e-12, "perimeter(1) should be '
    '2 pi"\nprint("Exercise 2 passed")'
)
USELESS_CHECK = (
    '# forgets to call area()\nassert math.pi > 3, "pi should exceed 3"\nprint("Exercise 1 passed")'
)


@pytest.fixture(scope="module")
def exercises(load_tool):
    return load_tool("exercises")


def solution_cells(nb, check: str = GOOD_CHECK) -> list:
    return [
        nb.md("# Exercises for chapter 1\n\nWrite `area`."),
        nb.code(SOLUTION_CODE, count=1, ExecuteTime={"end_time": "2026-01-01"}, collapsed=False),
        nb.code(check, tags=("check",), count=2, outputs=[nb.output("Exercise 1 passed\n")]),
        nb.code(METHOD_CHECK, tags=("check",), count=3, outputs=[nb.output("Exercise 2 passed\n")]),
        nb.md(
            "Why is the area quadratic in r?\n\n### BEGIN SOLUTION\nScaling lengths by k scales "
            "areas by k squared.\n### END SOLUTION\n\nMore prose."
        ),
    ]


@pytest.fixture
def repo(tmp_path: Path, nb) -> Path:
    nb.write(
        tmp_path / "solutions" / "01_demo.ipynb",
        solution_cells(nb),
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {
                "name": "python",
                "version": "3.11.7",
                "codemirror_mode": {"name": "ipython"},
            },
            "widgets": {"state": {}},
        },
    )
    return tmp_path


def run(exercises, root: Path, *args: str) -> int:
    return exercises.main([*args, "--root", str(root)])


def test_stub_replaces_exactly_the_marked_regions(exercises, repo):
    assert run(exercises, repo) == 0
    notebook = nbformat.read(repo / "exercises" / "01_demo.ipynb", as_version=4)
    solution = nbformat.read(repo / "solutions" / "01_demo.ipynb", as_version=4)
    assert notebook.cells[1].source == EXERCISE_CODE
    assert (
        notebook.cells[4].source
        == "Why is the area quadratic in r?\n\n*Your answer here.*\n\nMore prose."
    )
    for index in (0, 2, 3):  # cells without regions are copied unchanged
        assert notebook.cells[index].source == solution.cells[index].source
    compile(notebook.cells[1].source, "stub", "exec")


def test_outputs_counts_and_metadata_are_cleared(exercises, repo):
    assert run(exercises, repo) == 0
    notebook = json.loads((repo / "exercises" / "01_demo.ipynb").read_text(encoding="utf-8"))
    assert notebook["metadata"] == {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert all(cell["outputs"] == [] and cell["execution_count"] is None for cell in code)
    assert [cell["metadata"] for cell in notebook["cells"]] == [
        {},
        {},
        {"tags": ["check"]},
        {"tags": ["check"]},
        {},
    ]
    # copied
    assert [cell["id"] for cell in notebook["cells"]] == ["c000", "c001", "c002", "c003", "c004"]


def test_output_is_byte_identical_on_every_run(exercises, repo, capsys):
    assert run(exercises, repo) == 0
    path = repo / "exercises" / "01_demo.ipynb"
    first = path.read_bytes()
    assert first.endswith(b"}\n") and b'\n "cells": [\n  {\n   "cell_type"' in first  # indent=1
    capsys.readouterr()
    path.unlink()
    assert run(exercises, repo) == 0
    assert path.read_bytes() == first
    assert run(exercises, repo) == 0
    assert path.read_bytes() == first
    assert capsys.readouterr().out.count("wrote") == 1  # the third run had nothing to write


def test_check_detects_drift_and_changes_nothing(exercises, repo, nb, capsys):
    assert run(exercises, repo, "--check") == 1
    assert "exercises/01_demo.ipynb: missing" in capsys.readouterr().err
    assert not (repo / "exercises").exists()
    assert run(exercises, repo) == 0
    assert run(exercises, repo, "--check") == 0
    nb.write(
        repo / "solutions" / "01_demo.ipynb",
        solution_cells(nb, check=GOOD_CHECK.replace("2.0", "3.0")),
    )
    capsys.readouterr()
    before = (repo / "exercises" / "01_demo.ipynb").read_bytes()
    assert run(exercises, repo, "--check") == 1
    assert (
        "exercises/01_demo.ipynb: differs from what solutions/01_demo.ipynb generates"
        in capsys.readouterr().err
    )
    assert (repo / "exercises" / "01_demo.ipynb").read_bytes() == before


def test_stale_exercise_is_reported_then_removed(exercises, repo, capsys):
    assert run(exercises, repo) == 0
    old = repo / "exercises" / "99_gone.ipynb"
    old.write_bytes((repo / "exercises" / "01_demo.ipynb").read_bytes())
    assert run(exercises, repo, "--check") == 1
    assert "exercises/99_gone.ipynb: stale" in capsys.readouterr().err
    assert old.exists()
    assert run(exercises, repo) == 0
    assert not old.exists()
    assert run(exercises, repo, "--check") == 0


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "def f():\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    return 1\n    ### END "
            "SOLUTION\n    ### END SOLUTION",
            "may not nest",
        ),
        ("def f():\n    return 1\n    ### END SOLUTION", "without a '### BEGIN SOLUTION'"),
        ("def f():\n    ### BEGIN SOLUTION\n    return 1", "has no '### END SOLUTION'"),
        (
            "def f():\n    ## BEGIN SOLUTION\n    return 1\n    ### END SOLUTION",
            "looks like a solution marker",
        ),
    ],
)
def test_malformed_markers_name_notebook_and_cell(exercises, repo, nb, capsys, source, message):
    nb.write(
        repo / "solutions" / "02_bad.ipynb",
        [nb.md("# Bad"), nb.code(source), nb.code("f()", tags=("check",))],
    )
    assert run(exercises, repo, "--check") == 2
    err = capsys.readouterr().err
    assert "solutions/02_bad.ipynb, cell 2" in err and message in err
    assert not (repo / "exercises").exists()


def test_a_top_level_region_gets_a_generic_message(exercises):
    source, regions = exercises.stub_source(
        "x = 1\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION\nprint(x)", "here"
    )
    assert regions == 1
    assert (
        source
        == 'x = 1\nraise NotImplementedError("Exercise: replace this line with your '
           'code.")\nprint(x)'
    )


def test_structure_problems_without_a_kernel(exercises, repo, nb, capsys):
    """Regions without a check cell, or a check before any region, fail before anything runs."""
    nb.write(repo / "solutions" / "01_demo.ipynb", [nb.code(SOLUTION_CODE), nb.code(GOOD_CHECK)])
    nb.write(
        repo / "solutions" / "02_early.ipynb",
        [nb.code("import math", tags=("check",)), *solution_cells(nb)[1:]],
    )
    nb.write(repo / "solutions" / "03_none.ipynb", [nb.code("x = 1")])
    assert run(exercises, repo, "--stubs-fail") == 1
    err = capsys.readouterr().err
    assert (
        "solutions/01_demo.ipynb: has solution regions (cells 1) but no code cell tagged 'check'"
        in err
    )
    assert (
        "solutions/02_early.ipynb, cell 1: the 'check' cell comes before the first solution region "
        "(cell 2)"
        in err
    )
    assert "solutions/03_none.ipynb: no '### BEGIN SOLUTION' region" in err


def test_stubs_fail_reports_a_check_that_passes_on_the_stub(exercises, repo, nb, capsys):
    """Executes kernels: one notebook with proper checks, one whose first check ignores area()."""
    nb.write(repo / "solutions" / "02_useless.ipynb", solution_cells(nb, check=USELESS_CHECK))
    assert run(exercises, repo, "--stubs-fail", "--timeout", "60") == 1
    err = capsys.readouterr().err
    assert (
        "exercises/02_useless.ipynb, cell 3 ('# forgets to call area()'): this check passed on the "
        "stub"
        in err
    )
    assert "01_demo" not in err  # both of its checks fail on the stub
    assert "cell 4" not in err
    assert not (repo / "exercises").exists()  # nothing written


def test_stubs_fail_passes_when_every_check_fails_on_the_stub(exercises, repo, capfd):
    assert run(exercises, repo) == 0
    assert run(exercises, repo, "--stubs-fail", str(repo / "solutions" / "01_demo.ipynb")) == 0
    out, err = capfd.readouterr()  # file descriptors: the kernel process writes to them directly
    assert "stubs-fail: 2 checks in 1 notebooks all fail on the stubs" in out
    # The kernel talks over Unix sockets and is shut down by us: make test's output stays quiet.
    assert "IPKernelApp" not in err, err
