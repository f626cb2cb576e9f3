"""Execute notebooks in place, top to bottom, and store them clean.

Every code cell is run in order in a fresh kernel started in the notebook's folder
(so execution counts are 1, 2, 3, ...). A cell that raises stops the run unless it is
tagged ``raises-exception``. Metadata is reduced to what is not machine-specific, so
that a notebook executed on two machines differs only where its outputs do.

Usage::

    python tools/run_notebook.py book/01_tensors.ipynb [more.ipynb ...] [--timeout 600]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient.exceptions import CellExecutionError

# tools/ is a folder of scripts: find notebooks.py
sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebooks import KERNELSPEC, LANGUAGE_INFO, execute  # noqa: E402

# mystnb: a figure's caption and alt text (CONTRIBUTING.md)
ALLOWED_CELL_METADATA = {"tags", "mystnb"}


def clean_metadata(notebook: nbformat.NotebookNode) -> None:
    """Keep only portable metadata: the kernel's name and each cell's tags."""
    notebook.metadata = nbformat.from_dict(
        {"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO}
    )
    for index, cell in enumerate(notebook.cells):
        cell.metadata = nbformat.from_dict(
            {k: v for k, v in cell.metadata.items() if k in ALLOWED_CELL_METADATA and v}
        )
        cell["id"] = f"c{index:03d}"  # stable ids: diffs show content, not fresh random ids


def coalesce_streams(notebook: nbformat.NotebookNode) -> None:
    """Join consecutive stdout (or stderr) chunks: how the kernel split them is not content."""
    for cell in notebook.cells:
        merged: list = []
        for output in cell.get("outputs", []):
            previous = merged[-1] if merged else None
            if (
                output.get("output_type") == "stream"
                and previous is not None
                and previous.get("output_type") == "stream"
                and previous.get("name") == output.get("name")
            ):
                previous["text"] = "".join(previous["text"]) + "".join(output["text"])
            else:
                merged.append(output)
        if "outputs" in cell:
            cell.outputs = merged


def run(path: Path, timeout: int) -> None:
    """Execute the notebook at ``path`` in a fresh kernel started in its folder, and store it
    clean."""
    notebook = nbformat.read(path, as_version=4)
    execute(notebook, path.parent, timeout)
    coalesce_streams(notebook)
    clean_metadata(notebook)
    nbformat.validate(notebook)
    nbformat.write(notebook, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Execute notebooks in place and store them clean.")
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    args = parser.parse_args(argv)
    failed = 0
    for path in args.notebooks:
        try:
            run(path, args.timeout)
            print(f"ran {path}")
        except CellExecutionError as error:
            failed += 1
            print(f"{path}: a cell failed:\n{error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
