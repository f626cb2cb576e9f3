"""Write the learner's exercise notebooks from the solution notebooks, and prove the checks work.

``solutions/NN_topic.ipynb`` is the source. In its code cells, each exercise's answer sits
between a ``### BEGIN SOLUTION`` line and an ``### END SOLUTION`` line, inside the body of
the function the learner completes. ``exercises/NN_topic.ipynb`` is the same notebook with
every such region (both marker lines included) replaced by one line,
``raise NotImplementedError("...")`` naming the function, at the indentation of the BEGIN
line. A markdown cell may hold a region too (a written answer); it becomes
``*Your answer here.*``. Outputs are cleared, execution counts removed, and metadata
reduced to the kernel's name and each cell's tags, so the output depends only on the
solution notebook and is byte-identical on every run.

Each exercise is followed by a code cell tagged ``check`` that tests the learner's
function. ``--stubs-fail`` runs every exercise notebook in a fresh kernel and verifies
that every check cell fails there: a check that passes on the stub cannot tell a right
answer from none. (That every check passes on the solution is nbval's job.)

The markers are nbgrader's, and a region becomes a stub at the BEGIN line's indentation as
in nbgrader's ``generate_assignment`` (whose stub is ``# YOUR CODE HERE`` and
``raise NotImplementedError``, and ``YOUR ANSWER HERE`` in markdown). Unlike nbgrader, no cell
metadata, course folders or gradebook are needed, the markers must be written exactly as above,
there are no hidden tests or grading, and ``--stubs-fail`` is ours. The tool is ours rather than
nbgrader because the build runs offline and needs nothing beyond nbformat and a kernel (see
CONTRIBUTING.md, "Where these conventions come from").

Usage::

    python tools/exercises.py                 # write exercises/, remove stale exercise notebooks
    python tools/exercises.py --check         # change nothing; exit 1 if exercises/ is out of date
    python tools/exercises.py --stubs-fail    # exit 1 if any check cell passes on the stubs
    python tools/exercises.py --stubs-fail solutions/02_autograd.ipynb   # just one notebook

Every ``*.ipynb`` directly in ``exercises/`` is treated as generated: one whose solution
notebook is gone is removed (default mode) or reported (``--check``).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

# tools/ is a folder of scripts: find notebooks.py
sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebooks import KERNELSPEC, LANGUAGE_INFO, execute  # noqa: E402
from notebooks import cell_source as _source  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
CHECK_TAG = "check"
ANSWER_PLACEHOLDER = "*Your answer here.*"
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)")
_CLASS = re.compile(r"^(\s*)class\s+(\w+)")
_MARKER_LIKE = re.compile(r"^\s*#+\s*(BEGIN|END)\s+SOLUTION\b", re.IGNORECASE)


class ExerciseError(Exception):
    """A solution notebook is malformed; the message names the notebook and the cell."""


@dataclass
class Stubbed:
    """One generated exercise notebook and what the solution says about its exercises."""

    solution: Path
    exercise: Path
    text: str
    notebook: nbformat.NotebookNode
    region_cells: list[int] = field(default_factory=list)  # 1-based numbers of cells with regions
    check_cells: list[int] = field(default_factory=list)  # 1-based numbers of cells tagged check


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _exercise_name(kept: list[str], marker_indent: str) -> str | None:
    """The function (``Class.method`` for a method) whose body holds the marker, if any."""
    width = len(marker_indent)
    name = None
    for line in reversed(kept):
        if not line.strip():
            continue
        if name is None:
            match = _DEF.match(line)
            if match and len(match.group(1)) < width:
                name, width = match.group(2), len(match.group(1))
                if width == 0:
                    return name
            continue
        match = _CLASS.match(line)
        if match and len(match.group(1)) < width:
            return f"{match.group(2)}.{name}"
        if len(_indent(line)) < width:
            return name
    return name


def _stub_line(kept: list[str], indent: str, code: bool) -> str:
    if not code:
        return indent + ANSWER_PLACEHOLDER
    name = _exercise_name(kept, indent)
    if name is None:
        message = "Exercise: replace this line with your code."
    else:
        message = f"Exercise: write the body of {name}()."
    return f'{indent}raise NotImplementedError("{message}")'


def stub_source(source: str, where: str, code: bool = True) -> tuple[str, int]:
    """Replace each solution region of one cell; return (new source, number of regions).

    ``where`` ("solutions/x.ipynb, cell 4") prefixes error messages.
    """
    lines = source.split("\n")
    kept: list[str] = []
    regions = 0
    begin_line: int | None = None
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped == BEGIN:
            if begin_line is not None:
                raise ExerciseError(
                    f"{where}: '{BEGIN}' on line {number} inside the region opened on line "
                    f"{begin_line} (regions may not nest)"
                )
            begin_line = number
            kept.append(_stub_line(kept, _indent(line), code))
            regions += 1
        elif stripped == END:
            if begin_line is None:
                raise ExerciseError(
                    f"{where}: '{END}' on line {number} without a '{BEGIN}' before it"
                )
            begin_line = None
        elif _MARKER_LIKE.match(line):
            raise ExerciseError(
                f"{where}: line {number} looks like a solution marker but is not exactly '{BEGIN}' "
                f"or '{END}': {stripped!r}"
            )
        elif begin_line is None:
            kept.append(line)
    if begin_line is not None:
        raise ExerciseError(f"{where}: the '{BEGIN}' on line {begin_line} has no '{END}'")
    return "\n".join(kept), regions


def stub_notebook(solution: Path, exercise: Path, root: Path) -> Stubbed:
    """Build the exercise notebook for one solution notebook (nothing is written)."""
    label = _shown(solution, root)
    try:
        source_nb = nbformat.read(solution, as_version=4)
    except Exception as error:  # nbformat raises several unrelated types for bad files
        raise ExerciseError(f"{label}: not a readable notebook ({error})") from error
    notebook = nbformat.v4.new_notebook()
    notebook.nbformat_minor = max(5, notebook.nbformat_minor)
    notebook.metadata = nbformat.from_dict(
        {"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO}
    )
    result = Stubbed(solution, exercise, "", notebook)
    for index, cell in enumerate(source_nb.cells):
        number = index + 1
        where = f"{label}, cell {number}"
        kind = cell.get("cell_type")
        text, regions = stub_source(_source(cell), where, code=(kind == "code"))
        if kind == "raw" and regions:
            raise ExerciseError(f"{where}: a raw cell may not hold a solution region")
        tags = [str(tag) for tag in cell.get("metadata", {}).get("tags", [])]
        cell_id = cell.get("id") or f"c{index:03d}"
        if kind == "code":
            new = nbformat.v4.new_code_cell(text)
        elif kind == "markdown":
            new = nbformat.v4.new_markdown_cell(text)
            if cell.get("attachments"):
                new.attachments = cell.attachments
        else:
            new = nbformat.v4.new_raw_cell(text)
        new.id = cell_id
        new.metadata = nbformat.from_dict({"tags": tags} if tags else {})
        notebook.cells.append(new)
        if regions:
            result.region_cells.append(number)
        if kind == "code" and CHECK_TAG in tags:
            result.check_cells.append(number)
    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as error:
        raise ExerciseError(
            f"{label}: the generated exercise notebook is invalid: {error.message}"
        ) from error
    text = nbformat.writes(notebook, version=4)
    result.text = text if text.endswith("\n") else text + "\n"
    return result


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def solution_notebooks(root: Path, selected: list[Path] | None = None) -> list[Path]:
    """The solution notebooks to work on: the ones named, or every ``solutions/*.ipynb``."""
    if selected:
        paths = [path.resolve() for path in selected]
        for path in paths:
            if path.parent != (root / "solutions").resolve() or path.suffix != ".ipynb":
                raise ExerciseError(
                    f"{path}: not a notebook directly in {_shown(root / 'solutions', root)}/"
                )
            if not path.exists():
                raise ExerciseError(f"{_shown(path, root)}: no such notebook")
        return paths
    return sorted((root / "solutions").glob("*.ipynb"))


def build_all(root: Path, selected: list[Path] | None = None) -> list[Stubbed]:
    exercises_dir = root / "exercises"
    return [
        stub_notebook(path, exercises_dir / path.name, root)
        for path in solution_notebooks(root, selected)
    ]


def stale_exercises(root: Path, built: list[Stubbed]) -> list[Path]:
    """Exercise notebooks whose solution notebook is gone."""
    wanted = {item.exercise.name for item in built}
    return [
        path for path in sorted((root / "exercises").glob("*.ipynb")) if path.name not in wanted
    ]


def write(root: Path, selected: list[Path] | None) -> int:
    built = build_all(root, selected)
    (root / "exercises").mkdir(exist_ok=True)
    for item in built:
        current = item.exercise.read_text(encoding="utf-8") if item.exercise.exists() else None
        if current != item.text:
            item.exercise.write_text(item.text, encoding="utf-8")
            print(f"exercises: wrote {_shown(item.exercise, root)}")
    if not selected:
        for path in stale_exercises(root, built):
            path.unlink()
            print(f"exercises: removed {_shown(path, root)} (its solution notebook is gone)")
    print(f"exercises: {len(built)} exercise notebooks up to date")
    return 0


def check(root: Path, selected: list[Path] | None) -> int:
    built = build_all(root, selected)
    problems = []
    for item in built:
        shown = _shown(item.exercise, root)
        source = _shown(item.solution, root)
        if not item.exercise.exists():
            problems.append(f"{shown}: missing (generated from {source}); run `make exercises`")
        elif item.exercise.read_text(encoding="utf-8") != item.text:
            problems.append(
                f"{shown}: differs from what {source} generates; edit the solution notebook, then "
                "run `make exercises`"
            )
    if not selected:
        for path in stale_exercises(root, built):
            problems.append(
                f"{_shown(path, root)}: stale, no solutions/{path.name} generates it; run `make "
                "exercises` to remove it"
            )
    for line in problems:
        print(f"exercises check: {line}", file=sys.stderr)
    if problems:
        return 1
    print(f"exercises check: {len(built)} exercise notebooks match their solutions")
    return 0


def structure_problems(item: Stubbed, root: Path) -> list[str]:
    """Problems visible without running anything: exercises without checks, checks too early."""
    label = _shown(item.solution, root)
    if not item.region_cells:
        return [f"{label}: no '{BEGIN}' region, so there is no exercise to check"]
    if not item.check_cells:
        return [
            f"{label}: has solution regions (cells {_numbers(item.region_cells)}) but no code cell "
            f"tagged '{CHECK_TAG}'"
        ]
    first_region = item.region_cells[0]
    return [
        f"{label}, cell {number}: the '{CHECK_TAG}' cell comes before the first solution region "
        f"(cell {first_region}), so it cannot check an exercise"
        for number in item.check_cells
        if number < first_region
    ]


def _numbers(numbers: list[int]) -> str:
    return ", ".join(str(number) for number in numbers)


def _first_line(cell: dict) -> str:
    for line in _source(cell).splitlines():
        if line.strip():
            return line.strip()
    return ""


def run_stub(item: Stubbed, root: Path, timeout: int) -> tuple[int, list[str]]:
    """Execute one exercise notebook (in memory); return (checks seen, checks that passed)."""
    notebook = nbformat.reads(item.text, as_version=4)
    workdir = root / "exercises"
    if not workdir.is_dir():
        workdir = item.solution.parent
    label = _shown(item.exercise, root)
    try:
        execute(notebook, workdir, timeout, allow_errors=True, record_timing=False)
    except Exception as error:  # a timeout or a dead kernel: allow_errors covers only cell errors
        return len(item.check_cells), [
            f"{label}: could not be run to the end ({type(error).__name__}: {str(error)[:200]})"
        ]
    passed = []
    for number in item.check_cells:
        cell = notebook.cells[number - 1]
        if not any(output.get("output_type") == "error" for output in cell.get("outputs", [])):
            passed.append(
                f"{label}, cell {number} ({_first_line(cell)!r}): this check passed on the stub; "
                "it must call the learner's function so that an unfinished exercise fails it"
            )
    return len(item.check_cells), passed


def stubs_fail(root: Path, selected: list[Path] | None, timeout: int) -> int:
    built = build_all(root, selected)
    problems: list[str] = []
    checks = 0
    for item in built:
        found = structure_problems(item, root)
        if found:
            problems.extend(found)
            continue
        count, passed = run_stub(item, root, timeout)
        checks += count
        problems.extend(passed)
    for line in problems:
        print(f"stubs-fail: {line}", file=sys.stderr)
    if problems:
        print(f"stubs-fail: {len(problems)} problems in {len(built)} notebooks", file=sys.stderr)
        return 1
    print(f"stubs-fail: {checks} checks in {len(built)} notebooks all fail on the stubs")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Write exercises/ from solutions/ (solution regions cut out), or check it.",
        epilog="Regions are the lines from '### BEGIN SOLUTION' to '### END SOLUTION'.",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--check",
        action="store_true",
        help="change nothing; exit 1 naming each exercise notebook that is missing, differs or is "
             "stale",
    )
    mode.add_argument(
        "--stubs-fail",
        action="store_true",
        help="run each exercise notebook in a fresh kernel; exit 1 if any cell tagged 'check' does "
             "not fail",
    )
    parser.add_argument(
        "notebooks",
        nargs="*",
        type=Path,
        help="solution notebooks to work on (default: every solutions/*.ipynb)",
    )
    parser.add_argument(
        "--timeout", type=int, default=300, help="seconds per cell for --stubs-fail (default 300)"
    )
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the repository (default: this one)"
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    try:
        if args.check:
            return check(root, args.notebooks)
        if args.stubs_fail:
            return stubs_fail(root, args.notebooks, args.timeout)
        return write(root, args.notebooks)
    except ExerciseError as error:
        print(f"exercises: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
