"""Check that committed notebooks were run top to bottom and stored clean.

For every ``.ipynb`` under the folders given (skipping ``_build``, ``.ipynb_checkpoints``,
hidden folders, and a ``solutions`` folder nested inside one of them, which may be a
link for the website), this fails, naming the notebook and the cell, when

- a non-empty code cell was never run (its execution count is null);
- the execution counts of the code cells are not exactly 1, 2, 3, ... in cell order,
  which means the notebook was not run top to bottom in a fresh kernel;
- an error is stored in a cell not tagged ``raises-exception``, or a cell tagged
  ``raises-exception`` stores no error (the tag is stale);
- a text output holds a path of this machine (the repository's folder, a home folder,
  ``site-packages``): outputs must be the same on every machine;
- metadata carries machine-specific or editor data: notebook metadata other than
  ``kernelspec`` (name, display_name, language) and ``language_info`` (name only), or
  cell metadata other than ``tags`` (``ExecuteTime``, ``execution``, ``collapsed``,
  ``scrolled``, ``vscode``, ``colab``, ``papermill``, ``jupytext``, widgets, ...).

``tools/run_notebook.py`` writes exactly what this accepts: run a notebook with it
(``make run NB=book/01_tensors.ipynb``) to fix every problem above but a stored error.

Usage::

    python tools/hygiene.py book solutions
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

# tools/ is a folder of scripts: find notebooks.py
sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebooks import cell_source as _source  # noqa: E402
from notebooks import find_notebooks  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ALLOWED_NOTEBOOK_METADATA = {"kernelspec", "language_info"}
ALLOWED_KERNELSPEC = {"name", "display_name", "language"}
ALLOWED_LANGUAGE_INFO = {"name"}
# mystnb: a figure's caption and alt text (CONTRIBUTING.md)
ALLOWED_CELL_METADATA = {"tags", "mystnb"}
RAISES_TAG = "raises-exception"
FIX = "store it with `make run NB=...` (tools/run_notebook.py)"


def _text(value: object) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


# characters no cell should hold: the C0 controls but tab and newline, and DEL
_CONTROLS = frozenset(chr(code) for code in [*range(32), 127]) - {"\t", "\n"}


def _first_line(cell: dict) -> str:
    for line in _source(cell).splitlines():
        if line.strip():
            return line.strip()[:60]
    return ""


def _machine_path_pattern(root: Path) -> re.Pattern[str]:
    home = re.escape(str(Path.home()))
    parts = [
        re.escape(str(root)),
        r"site-packages",
        r"/home/[\w.-]+/",
        r"/Users/[\w.-]+/",
        r"[A-Za-z]:\\Users\\",
    ]
    if home != re.escape("/"):
        parts.append(home + "/")
    return re.compile("|".join(parts))


def _metadata_problems(metadata: object) -> list[str]:
    if not isinstance(metadata, dict):
        return ["notebook metadata is not a mapping"]
    problems = []
    extra = sorted(set(metadata) - ALLOWED_NOTEBOOK_METADATA)
    if extra:
        problems.append(
            f"notebook metadata has {', '.join(extra)} (only kernelspec and language_info are kept)"
        )
    kernelspec = metadata.get("kernelspec")
    if not isinstance(kernelspec, dict):
        problems.append("notebook metadata has no kernelspec")
    else:
        extra = sorted(set(kernelspec) - ALLOWED_KERNELSPEC)
        if extra:
            problems.append(
                f"kernelspec has {', '.join(extra)} (only name, display_name and language are kept)"
            )
        if kernelspec.get("name") != "python3":
            problems.append(
                f"kernelspec name is {kernelspec.get('name')!r}, expected 'python3' (a local "
                "kernel name breaks on other machines)"
            )
    language_info = metadata.get("language_info", {})
    if not isinstance(language_info, dict):
        problems.append("language_info is not a mapping")
    else:
        extra = sorted(set(language_info) - ALLOWED_LANGUAGE_INFO)
        if extra:
            problems.append(
                f"language_info has {', '.join(extra)} (only its name is kept; the version is "
                "machine-specific)"
            )
    return problems


def check_notebook(path: Path, root: Path) -> list[str]:
    """Every hygiene problem of one notebook, each naming the notebook (and cell)."""
    try:
        label = path.resolve().relative_to(root).as_posix()
    except ValueError:
        label = str(path)
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return [f"{label}: not a readable notebook ({error})"]
    if (
        not isinstance(notebook, dict)
        or notebook.get("nbformat") != 4
        or not isinstance(notebook.get("cells"), list)
    ):
        return [f"{label}: not an nbformat 4 notebook"]
    problems = [
        f"{label}: {problem}; {FIX}" for problem in _metadata_problems(notebook.get("metadata", {}))
    ]
    machine_path = _machine_path_pattern(root)
    code_cells = [
        cell
        for cell in notebook["cells"]
        if cell.get("cell_type") == "code" and _source(cell).strip()
    ]
    never_run = bool(code_cells) and all(cell.get("execution_count") is None for cell in code_cells)
    if never_run:  # one line for a draft, not one per cell
        problems.append(
            f"{label}: never executed ({len(code_cells)} code cells have no execution count); {FIX}"
        )
    junk: dict[str, list[int]] = {}
    expected_count = 1
    for number, cell in enumerate(notebook["cells"], start=1):
        where = f"{label}, cell {number} ({_first_line(cell)!r})"
        metadata = cell.get("metadata", {})
        extra = (
            sorted(set(metadata) - ALLOWED_CELL_METADATA)
            if isinstance(metadata, dict)
            else ["(not a mapping)"]
        )
        if extra:
            junk.setdefault(", ".join(extra), []).append(number)
            if len(junk[", ".join(extra)]) == 1:
                problems.append(
                    f"{where}: cell metadata has {', '.join(extra)} (only tags are kept); {FIX}"
                )
        controls = sorted({f"{ord(char):#04x}" for char in _source(cell) if char in _CONTROLS})
        if controls:
            # "\bar" typed in a non-raw Python string becomes a backspace and "\a" a bell: the
            # page's formulas then fail to typeset
            problems.append(
                f"{where}: the source holds control characters {', '.join(controls)}; write the "
                "backslash twice (or use a raw string) where the text was made by code"
            )
        if cell.get("cell_type") != "code" or never_run:
            continue
        tags = metadata.get("tags", []) if isinstance(metadata, dict) else []
        count = cell.get("execution_count")
        outputs = cell.get("outputs", [])
        if not _source(cell).strip():
            if count is not None or outputs:
                problems.append(
                    f"{where}: an empty code cell with a count or outputs; delete it or {FIX}"
                )
            continue
        if count is None:
            problems.append(
                f"{where}: never run (execution count is null); run the notebook top to bottom, "
                f"{FIX}"
            )
        elif count != expected_count:
            problems.append(
                f"{where}: execution count {count}, expected {expected_count}: the notebook was "
                "not run top to bottom "
                f"in a fresh kernel; {FIX}"
            )
        if count is not None:
            expected_count = count + 1
        else:
            expected_count += 1
        errors = [output for output in outputs if output.get("output_type") == "error"]
        if errors and RAISES_TAG not in tags:
            error = errors[0]
            problems.append(
                f"{where}: stores an error ({error.get('ename')}: {str(error.get('evalue'))[:80]}) "
                "but is not tagged "
                f"'{RAISES_TAG}'; fix the cell, or tag it if raising is its point"
            )
        if RAISES_TAG in tags and not errors and count is not None:
            problems.append(
                f"{where}: tagged '{RAISES_TAG}' but stores no error; remove the tag or make the "
                "cell raise"
            )
        for output in outputs:
            texts = []
            if output.get("output_type") == "stream":
                texts.append(_text(output.get("text", "")))
            elif output.get("output_type") in ("execute_result", "display_data"):
                texts.extend(
                    _text(value)
                    for key, value in output.get("data", {}).items()
                    if key.startswith("text/")
                )
            for text in texts:
                match = machine_path.search(text)
                if match:
                    problems.append(
                        f"{where}: an output holds a path of this machine ({match.group(0)!r}); "
                        "print something portable"
                    )
                    break
    for keys, numbers in junk.items():
        if len(numbers) > 1:
            problems.append(
                f"{label}: cells {', '.join(map(str, numbers[1:]))} also have cell metadata {keys}"
            )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Check that notebooks were run top to bottom and stored clean."
    )
    parser.add_argument(
        "folders",
        nargs="+",
        type=Path,
        help="folders (or single notebooks) to check, e.g. book solutions",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the repository, for messages and path checks (default: this one)",
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    notebooks: list[Path] = []
    for folder in args.folders:
        if folder.is_file() and folder.suffix == ".ipynb":
            notebooks.append(folder)
        elif folder.is_dir():
            notebooks.extend(find_notebooks(folder))
        else:
            print(f"hygiene: {folder}: no such folder or notebook", file=sys.stderr)
            return 2
    problems = [problem for path in notebooks for problem in check_notebook(path, root)]
    for problem in problems:
        print(f"hygiene: {problem}", file=sys.stderr)
    if problems:
        bad = len({problem.split(":", 1)[0].split(",", 1)[0] for problem in problems})
        print(
            f"hygiene: {len(problems)} problems in {bad} of {len(notebooks)} notebooks",
            file=sys.stderr,
        )
        return 1
    print(f"hygiene: {len(notebooks)} notebooks clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
