"""Every exercise's check rejects plausible wrong answers, each with the hint that names its
mistake.

The wrong answers live in ``tests/wrong_answers/NN_topic/exK_slug.py``, one file per mistake: Python
source that redefines the exercise's function(s) the way a learner might get them wrong (see
``tests/wrong_answers/README.md``). Its docstring has a line ``Hint: <text>``; the check cell of
exercise K must fail on it with an exception whose message contains that text.

Each solution notebook runs once, in this process (its code cells exec'd in one namespace, in order,
with the working directory restored afterwards). Before each check cell runs, every wrong answer for
that exercise is tried on a copy of the namespace: the wrong answer's source is exec'd (replacing
the solution's definition), then the check cell. The check cell then runs on the solution, which
must pass.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions"
WRONG = Path(__file__).resolve().parent / "wrong_answers"
BEGIN = "### BEGIN SOLUTION"
MIN_WRONG_ANSWERS = 3
_FILE = re.compile(r"^ex(\d+)_\w+\.py$")
_HINT = re.compile(r"^Hint:\s*(.+?)\s*$", re.MULTILINE)


@dataclass
class Outcome:
    error: str | None  # "Type: message" of what the check cell raised, None when it passed
    output: str


@dataclass
class Run:
    exercises: int  # check cells in the notebook
    solution: dict[int, Outcome]  # exercise number -> the check's outcome on the solution
    wrong: dict[str, Outcome]  # wrong answer file name -> the check's outcome on it


def _cells(notebook: Path) -> list[tuple[str, str, list[str]]]:
    data = json.loads(notebook.read_text(encoding="utf-8"))
    return [
        (cell["cell_type"], "".join(cell["source"]), cell.get("metadata", {}).get("tags", []))
        for cell in data["cells"]
    ]


def wrong_answers(stem: str) -> dict[int, list[Path]]:
    """Exercise number -> its wrong answer files, for the notebook ``stem``."""
    found: dict[int, list[Path]] = {}
    for path in sorted((WRONG / stem).glob("*.py")):
        match = _FILE.match(path.name)
        assert match, f"{path}: name wrong answers exK_what_goes_wrong.py"
        found.setdefault(int(match.group(1)), []).append(path)
    return found


def hint_of(path: Path) -> str:
    match = _HINT.search(path.read_text(encoding="utf-8"))
    assert match, (
        f"{path}: its docstring needs a line 'Hint: <part of the message the check must give>'"
    )
    return match.group(1)


def _exec(source: str, name: str, namespace: dict) -> Outcome:
    output = io.StringIO()
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            # the repository's own notebooks
            exec(compile(source, name, "exec"), namespace)  # noqa: S102
    except BaseException as error:  # noqa: BLE001 - a check may raise anything;
        # KeyboardInterrupt still propagates below
        if isinstance(error, KeyboardInterrupt):
            raise
        return Outcome(
            f"{type(error).__name__}: {error}", output.getvalue() + traceback.format_exc(limit=-3)
        )
    return Outcome(None, output.getvalue())


def _memoize_training(namespace: dict) -> None:
    """Chapter 8's ``train_tiny`` is deterministic and the slowest thing a check calls: run each lr
    once."""
    train = namespace.get("train_tiny")
    if train is None or getattr(train, "_memoized", False):
        return
    cache: dict[tuple, list[float]] = {}

    def train_tiny(lr, steps=40):
        if (lr, steps) not in cache:
            cache[(lr, steps)] = train(lr, steps)
        return list(cache[(lr, steps)])

    train_tiny._memoized = True  # type: ignore[attr-defined]
    namespace["train_tiny"] = train_tiny


def run_notebook(stem: str) -> Run:
    cells = _cells(SOLUTIONS / f"{stem}.ipynb")
    answers = wrong_answers(stem)
    namespace: dict = {"__name__": "__main__"}
    home = os.getcwd()
    exercise = 0
    solution: dict[int, Outcome] = {}
    wrong: dict[str, Outcome] = {}
    try:
        for index, (kind, source, tags) in enumerate(cells):
            if kind != "code":
                continue
            name = f"<{stem} cell {index}>"
            if "check" in tags:
                exercise += 1
                _memoize_training(namespace)
                here = os.getcwd()
                for path in answers.get(exercise, []):
                    trial = dict(namespace)
                    with tempfile.TemporaryDirectory(prefix="wrong-answer-") as scratch:
                        os.chdir(scratch)
                        try:
                            defined = _exec(path.read_text(encoding="utf-8"), str(path), trial)
                            wrong[path.name] = (
                                defined if defined.error else _exec(source, name, trial)
                            )
                        finally:
                            os.chdir(here)
                solution[exercise] = _exec(source, name, namespace)
            else:
                outcome = _exec(source, name, namespace)
                assert outcome.error is None, (
                    f"{name} failed on the solution: {outcome.error}\n{outcome.output}"
                )
    finally:
        os.chdir(home)
    return Run(exercise, solution, wrong)


NOTEBOOKS = sorted(path.stem for path in SOLUTIONS.glob("*.ipynb"))
_RUNS: dict[str, Run] = {}


def _run(stem: str) -> Run:
    if stem not in _RUNS:
        _RUNS[stem] = run_notebook(stem)
    return _RUNS[stem]


def _cases() -> list:
    return [
        pytest.param(stem, path, id=f"{stem}/{path.name}")
        for stem in NOTEBOOKS
        for paths in wrong_answers(stem).values()
        for path in paths
    ]


def test_every_exercise_has_wrong_answers() -> None:
    for stem in NOTEBOOKS:
        checks = sum(
            "check" in tags
            for kind, _, tags in _cells(SOLUTIONS / f"{stem}.ipynb")
            if kind == "code"
        )
        answers = wrong_answers(stem)
        assert set(answers) <= set(range(1, checks + 1)), (
            f"{stem}: wrong answers for exercises {sorted(answers)}, it has {checks}"
        )
        for number in range(1, checks + 1):
            count = len(answers.get(number, []))
            assert count >= MIN_WRONG_ANSWERS, (
                f"{stem}, exercise {number}: {count} wrong answers in tests/wrong_answers/{stem}/, "
                f"want {MIN_WRONG_ANSWERS}"
            )


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_solutions_pass_their_checks(stem: str) -> None:
    run = _run(stem)
    assert len(run.solution) == run.exercises
    for number, outcome in run.solution.items():
        assert outcome.error is None, (
            f"{stem}, exercise {number}: the check fails on the solution: "
            f"{outcome.error}\n{outcome.output}"
        )


@pytest.mark.parametrize(("stem", "path"), _cases())
def test_wrong_answer_fails_with_its_hint(stem: str, path: Path) -> None:
    outcome = _run(stem).wrong[path.name]
    hint = hint_of(path)
    assert outcome.error is not None, (
        f"{path.name}: the check passed on this wrong answer (expected a failure mentioning "
        f"{hint!r})"
    )
    assert hint in outcome.error, (
        f"{path.name}: expected the failure to mention {hint!r}, got "
        f"{outcome.error}\n{outcome.output}"
    )


def test_hint_matching_can_fail(tmp_path: Path) -> None:
    """The harness itself: a wrong answer the check accepts, or one failing for another reason, is
    reported."""
    namespace: dict = {}
    assert _exec("def f():\n    return 1\n", "<t>", namespace).error is None
    failed = _exec("assert f() == 2, 'f should return 2'", "<t>", namespace)
    assert failed.error == "AssertionError: f should return 2"
