"""Every docstring of the generated package reads as written: no control characters.

A LaTeX docstring that is not a raw string turns ``\\bar`` into a backspace and ``\\text`` into
a tab, which ``help()`` and the website then show as garbage. This walks every module of
``tensorlib`` and checks the module's, every class's and every function's docstring.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tensorlib"
CONTROL = re.compile(r"[\x00-\x08\x09\x0b-\x1f\x7f]")  # newline is the only one allowed
MODULES = sorted(PACKAGE.rglob("*.py"))


def docstrings(path: Path) -> list[tuple[str, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in [tree, *ast.walk(tree)]:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text is not None:
                found.append((getattr(node, "name", "<module>"), text))
    return found


def test_the_walk_finds_the_package():
    assert len(MODULES) > 10 and any(path.name == "layers.py" for path in MODULES)
    assert sum(len(docstrings(path)) for path in MODULES) > 200


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.relative_to(PACKAGE).as_posix())
def test_no_docstring_holds_a_control_character(path):
    bad = [
        f"{name}: {sorted(set(CONTROL.findall(text)))!r} near "
        f"{text[max(CONTROL.search(text).start() - 30, 0) :][:60]!r}"
        for name, text in docstrings(path)
        if CONTROL.search(text)
    ]
    assert not bad, (
        f'{path.name}: write LaTeX docstrings as raw strings (r"""..."""): ' + "; ".join(bad)
    )


def test_the_check_catches_a_non_raw_latex_docstring(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        'def f():\n    """:math:`\\bar x` and :math:`\\text{n}`."""\n', encoding="utf-8"
    )
    (name, text), = docstrings(sample)
    assert name == "f" and CONTROL.search(text)
