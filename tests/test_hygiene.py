"""Tests of tools/hygiene.py (notebooks stored run and clean) and of tools/nbval_sanitize.cfg."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest


@pytest.fixture(scope="module")
def hygiene(load_tool):
    return load_tool("hygiene")


def error_output(name: str = "ValueError", value: str = "bad input"):
    return nbformat.v4.new_output("error", ename=name, evalue=value, traceback=[f"{name}: {value}"])


def clean_cells(nb) -> list:
    return [
        nb.md("# A chapter\n\nProse."),
        nb.code("x = 1\nprint(x)", count=1, outputs=[nb.output("1\n")]),
        nb.code("", count=None),  # an empty cell is never run, and that is fine
        nb.code(
            'raise ValueError("bad input")',
            tags=("raises-exception",),
            count=2,
            outputs=[error_output()],
        ),
        nb.code(
            "x + 1",
            tags=("nbval-ignore-output",),
            count=3,
            outputs=[
                nbformat.v4.new_output(
                    "execute_result", data={"text/plain": "2"}, execution_count=3
                )
            ],
        ),
    ]


def run(hygiene, root: Path, *folders: str) -> int:
    return hygiene.main([*(str(root / folder) for folder in folders), "--root", str(root)])


def test_a_clean_notebook_passes(hygiene, tmp_path, nb, capsys):
    nb.write(tmp_path / "book" / "01_clean.ipynb", clean_cells(nb))
    nb.write(tmp_path / "solutions" / "01_clean.ipynb", clean_cells(nb))
    assert run(hygiene, tmp_path, "book", "solutions") == 0
    assert "hygiene: 2 notebooks clean" in capsys.readouterr().out


def with_change(nb, index: int, **changes) -> list:
    cells = clean_cells(nb)
    cells[index] = nb.code(**changes)
    return cells


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        (
            lambda nb: with_change(nb, 1, source="x = 1\nprint(x)", count=None),
            "cell 2 ('x = 1'): never run",
        ),
        (
            lambda nb: with_change(nb, 1, source="x = 1\nprint(x)", count=2),
            "cell 2 ('x = 1'): execution count 2, expected 1",
        ),
        (
            lambda nb: with_change(nb, 4, source="x + 1", count=7),
            "cell 5 ('x + 1'): execution count 7, expected 3",
        ),
        (
            lambda nb: with_change(
                nb, 1, source="x = 1\nprint(x)", count=1, outputs=[error_output("KeyError", "'x'")]
            ),
            "cell 2 ('x = 1'): stores an error (KeyError: 'x') but is not tagged "
            "'raises-exception'",
        ),
        (
            lambda nb: with_change(nb, 3, source="y = 2", tags=("raises-exception",), count=2),
            "cell 4 ('y = 2'): tagged 'raises-exception' but stores no error",
        ),
        (
            lambda nb: with_change(
                nb,
                1,
                source="print(np.__file__)",
                count=1,
                outputs=[
                    nb.output("/work/x/.venv/lib/python3.11/site-packages/numpy/__init__.py\n")
                ],
            ),
            "cell 2 ('print(np.__file__)'): an output holds a path of this machine",
        ),
        (
            lambda nb: with_change(
                nb, 1, source="x = 1", count=1, ExecuteTime={"start_time": "2026-11-30T04:00:00"}
            ),
            "cell 2 ('x = 1'): cell metadata has ExecuteTime",
        ),
        (
            lambda nb: with_change(
                nb,
                1,
                source="x = 1",
                count=1,
                execution={"iopub.status.busy": "2026-11-30T04:00:00"},
            ),
            "cell 2 ('x = 1'): cell metadata has execution",
        ),
        (
            lambda nb: with_change(nb, 1, source="x = 1", count=1, collapsed=True, scrolled=True),
            "cell 2 ('x = 1'): cell metadata has collapsed, scrolled",
        ),
        (
            lambda nb: with_change(nb, 1, source="x = 1", count=1, vscode={"languageId": "python"}),
            "cell 2 ('x = 1'): cell metadata has vscode",
        ),
        (
            lambda nb: with_change(nb, 1, source="x = 1\ny = '$\bar y$'", count=1),
            "cell 2 ('x = 1'): the source holds control characters 0x08",
        ),
    ],
    ids=[
        "unexecuted",
        "out-of-order",
        "skipped-count",
        "untagged-error",
        "stale-raises-tag",
        "machine-path",
        "ExecuteTime",
        "execution-timestamps",
        "collapsed-scrolled",
        "vscode",
        "backspace-from-a-non-raw-string",
    ],
)
def test_a_dirty_cell_fails_naming_notebook_and_cell(hygiene, tmp_path, nb, capsys, cells, message):
    nb.write(tmp_path / "book" / "01_clean.ipynb", clean_cells(nb))
    nb.write(tmp_path / "book" / "02_dirty.ipynb", cells(nb))
    assert run(hygiene, tmp_path, "book") == 1
    err = capsys.readouterr().err
    assert f"book/02_dirty.ipynb, {message}" in err
    assert "01_clean" not in err
    assert "1 of 2 notebooks" in err


KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        (
            {
                "kernelspec": KERNELSPEC,
                "language_info": {"name": "python"},
                "widgets": {"application/vnd.jupyter.widget-state+json": {}},
            },
            "notebook metadata has widgets",
        ),
        (
            {
                "kernelspec": KERNELSPEC,
                "language_info": {
                    "name": "python",
                    "version": "3.11.7",
                    "pygments_lexer": "ipython3",
                },
            },
            "language_info has pygments_lexer, version",
        ),
        (
            {
                "kernelspec": KERNELSPEC,
                "language_info": {"name": "python"},
                "colab": {"provenance": []},
                "papermill": {},
            },
            "notebook metadata has colab, papermill",
        ),
        (
            {
                "kernelspec": KERNELSPEC,
                "language_info": {"name": "python"},
                "jupytext": {"formats": "ipynb,py:percent"},
            },
            "notebook metadata has jupytext",
        ),
        (
            {
                "kernelspec": {**KERNELSPEC, "name": "tensorlib-venv"},
                "language_info": {"name": "python"},
            },
            "kernelspec name is 'tensorlib-venv'",
        ),
        (
            {
                "kernelspec": {**KERNELSPEC, "metadata": {"interpreter": {"hash": "abc"}}},
                "language_info": {"name": "python"},
            },
            "kernelspec has metadata",
        ),
        ({"language_info": {"name": "python"}}, "notebook metadata has no kernelspec"),
    ],
    ids=[
        "widgets",
        "language_info-version",
        "colab-papermill",
        "jupytext",
        "local-kernel",
        "interpreter",
        "no-kernelspec",
    ],
)
def test_junk_notebook_metadata_fails_naming_the_notebook(
    hygiene, tmp_path, nb, capsys, metadata, message
):
    nb.write(tmp_path / "solutions" / "03_junk.ipynb", clean_cells(nb), metadata=metadata)
    assert run(hygiene, tmp_path, "solutions") == 1
    assert f"solutions/03_junk.ipynb: {message}" in capsys.readouterr().err


def test_build_checkpoints_and_the_solutions_link_are_skipped(hygiene, tmp_path, nb, capsys):
    dirty = [nb.code("x = 1", count=None)]
    nb.write(tmp_path / "book" / "01_clean.ipynb", clean_cells(nb))
    nb.write(tmp_path / "book" / "_build" / "jupyter_execute" / "01_clean.ipynb", dirty)
    nb.write(tmp_path / "book" / ".ipynb_checkpoints" / "01_clean-checkpoint.ipynb", dirty)
    nb.write(tmp_path / "solutions" / "01_dirty.ipynb", dirty)
    os.symlink(tmp_path / "solutions", tmp_path / "book" / "solutions")
    assert run(hygiene, tmp_path, "book") == 0
    assert "hygiene: 1 notebooks clean" in capsys.readouterr().out
    assert run(hygiene, tmp_path, "book", "solutions") == 1  # named directly, solutions/ is checked
    assert (
        "solutions/01_dirty.ipynb: never executed (1 code cells have no execution count)"
        in capsys.readouterr().err
    )


def test_a_draft_gets_one_line_per_problem_not_one_per_cell(hygiene, tmp_path, nb, capsys):
    draft = [nb.code(f"x{i} = {i}", lines_to_next_cell=2) for i in range(5)]
    nb.write(
        tmp_path / "book" / "02_draft.ipynb",
        draft,
        metadata={"jupytext": {"formats": "ipynb,py:percent"}},
    )
    assert run(hygiene, tmp_path, "book") == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "hygiene: book/02_draft.ipynb: notebook metadata has jupytext (only kernelspec and "
        "language_info are kept); store it with `make run NB=...` (tools/run_notebook.py)",
        "hygiene: book/02_draft.ipynb: notebook metadata has no kernelspec; store it with `make "
        "run NB=...` (tools/run_notebook.py)",
        "hygiene: book/02_draft.ipynb: never executed (5 code cells have no execution count); "
        "store it with `make run NB=...` (tools/run_notebook.py)",
        "hygiene: book/02_draft.ipynb, cell 1 ('x0 = 0'): cell metadata has lines_to_next_cell "
        "(only tags are kept); store it with `make run NB=...` (tools/run_notebook.py)",
        "hygiene: book/02_draft.ipynb: cells 2, 3, 4, 5 also have cell metadata lines_to_next_cell",
        "hygiene: 5 problems in 1 of 1 notebooks",
    ]


def test_an_unreadable_notebook_and_a_missing_folder(hygiene, tmp_path, capsys):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "broken.ipynb").write_text("{not json", encoding="utf-8")
    assert run(hygiene, tmp_path, "book") == 1
    assert "book/broken.ipynb: not a readable notebook" in capsys.readouterr().err
    assert run(hygiene, tmp_path, "nowhere") == 2


def test_run_notebook_output_passes_hygiene(repo_root, tmp_path, nb):
    """tools/run_notebook.py writes exactly what hygiene accepts (executes a kernel)."""
    path = nb.write(
        tmp_path / "book" / "01_run.ipynb",
        [
            nb.md("# Run me"),
            nb.code("x = 21\nprint(x * 2)", ExecuteTime={"start_time": "yesterday"}),
            nb.code('raise KeyError("expected")', tags=("raises-exception",)),
            nb.code("x"),
        ],
        metadata={
            "kernelspec": KERNELSPEC,
            "language_info": {"name": "python", "version": "3.11.7"},
            "widgets": {},
        },
    )
    python = sys.executable
    hygiene_cmd = [
        python,
        str(repo_root / "tools" / "hygiene.py"),
        str(tmp_path / "book"),
        "--root",
        str(tmp_path),
    ]
    assert subprocess.run(hygiene_cmd, capture_output=True, timeout=60).returncode == 1
    ran = subprocess.run(
        [python, str(repo_root / "tools" / "run_notebook.py"), str(path), "--timeout", "60"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    checked = subprocess.run(hygiene_cmd, capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr
    assert "1 notebooks clean" in checked.stdout


# nbval sanitizer: hides addresses and timings, never a number a notebook computes.


@pytest.fixture(scope="module")
def sanitize(repo_root):
    nbval_plugin = pytest.importorskip("nbval.plugin")
    # nbval reads it in the locale's encoding
    text = (repo_root / "tools" / "nbval_sanitize.cfg").read_text(encoding="ascii")
    patterns = nbval_plugin.get_sanitize_patterns(text)
    assert len(patterns) == 4

    def apply(value: str) -> str:
        # nbval applies them the same way, in file order
        for regex, replacement in dict(patterns).items():
            value = re.sub(regex, replacement, value)
        return value

    return apply


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (
            "<tensorlib.engine.Tensor object at 0x7f3a2c1b4d90>",
            "<tensorlib.engine.Tensor object at 0xADDRESS>",
        ),
        ("<function relu at 0x55d2a1b2>", "<function relu at 0xADDRESS>"),
        ("buffer 0x7f3a2c1b4d90", "buffer 0xADDRESS"),
        (
            "100%|##########| 10/10 [00:01<00:00, 12.34it/s]",
            "100%|##########| 10/10 [ELAPSED<REMAINING, RATE]",
        ),
        (
            " 30%|###       | 3/10 [01:02:03<?, ?it/s]",
            " 30%|###       | 3/10 [ELAPSED<REMAINING, RATE]",
        ),
        ("3/10 [00:05<00:10, 2.50s/it, loss=0.512]", "3/10 [ELAPSED<REMAINING, RATE, loss=0.512]"),
        ("epoch 1 took 1.23 s", "epoch 1 took DURATION"),
        (
            "forward: 12ms, backward: 3.5 \u00b5s, step 40 ns.",
            "forward: DURATION, backward: DURATION, step DURATION.",
        ),
    ],
)
def test_sanitizer_hides_addresses_and_timings(sanitize, raw, clean):
    assert sanitize(raw) == clean


@pytest.mark.parametrize(
    "raw",
    [
        "0x3f800000 is 1.0 as float32 bits; 0x3ff0000000000000 as float64; mask 0xff",
        "loss 0.1234 after 3 steps and 10 samples",
        "tensor([[1.5000, 2.0000]], dtype=float32) s",
        "shape (2, 3), strides (24, 8)",
        "lr=1e-3 momentum=0.9 epochs=10",
        "10/10 items",
    ],
)
def test_sanitizer_leaves_real_numbers_alone(sanitize, raw):
    assert sanitize(raw) == raw
