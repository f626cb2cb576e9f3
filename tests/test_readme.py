"""The README's code runs and prints what the README says it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_a_python_example():
    assert python_blocks(), "README.md should show how to use the package"


def test_readme_examples_run_and_print_what_they_claim():
    for block in python_blocks():
        claimed = [
            line.split("#")[-1].strip()
            for line in block.splitlines()
            if line.startswith("print(") and "#" in line
        ]
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            exec(compile(block, str(README), "exec"), {"__name__": "readme_example"})
        assert output.getvalue().splitlines() == claimed, (output.getvalue(), claimed)
