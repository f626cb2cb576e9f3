"""Fixtures for the tests of the tools in tools/: load a tool as a module, write small notebooks."""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _no_blas_spin_left_by_earlier_tests(monkeypatch):
    """Each test starts as if no matrix product had run in the last 0.1 s: whether one test's
    ``parallel_for`` splits must not depend on the products an earlier test made
    (``tensorlib.engine.parallel.blas_may_be_spinning``)."""
    from tensorlib.engine import parallel

    monkeypatch.setattr(parallel, "_last_threaded_product", -math.inf)


@pytest.fixture
def threads():
    """``threads(n)`` sets tensorlib's thread count for the test; restored afterwards."""
    from tensorlib.engine import parallel

    previous = parallel.get_num_threads()
    yield parallel.set_num_threads
    parallel.set_num_threads(previous)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository these tests belong to."""
    return REPO


@pytest.fixture(scope="session")
def load_tool() -> Callable[[str], ModuleType]:
    """Import ``tools/<name>.py`` (the tools folder is not a package) under a private name."""

    def load(name: str) -> ModuleType:
        module_name = f"_tensorlib_tools_{name}"
        if module_name in sys.modules:
            return sys.modules[module_name]
        spec = importlib.util.spec_from_file_location(module_name, REPO / "tools" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return module

    return load


def _code(
    source: str,
    tags: tuple[str, ...] = (),
    count: int | None = None,
    outputs: list | None = None,
    **metadata,
):
    cell = nbformat.v4.new_code_cell(source, execution_count=count, outputs=outputs or [])
    cell.metadata = nbformat.from_dict({**({"tags": list(tags)} if tags else {}), **metadata})
    return cell


def _markdown(source: str, tags: tuple[str, ...] = ()):
    cell = nbformat.v4.new_markdown_cell(source)
    cell.metadata = nbformat.from_dict({"tags": list(tags)} if tags else {})
    return cell


def _write(path: Path, cells: list, metadata: dict | None = None) -> Path:
    """Write a notebook with stable ids and clean metadata (unless ``metadata`` says otherwise)."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata = nbformat.from_dict(
        metadata
        if metadata is not None
        else {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        }
    )
    for index, cell in enumerate(cells):
        cell.id = f"c{index:03d}"
    notebook.cells = cells
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


@pytest.fixture(scope="session")
def nb() -> SimpleNamespace:
    """Notebook builders: ``nb.code(src, tags=..., count=..., outputs=...)``, ``nb.md(src)``,
    ``nb.write(path, [cells], metadata=None)`` and ``nb.output(text)`` (a stdout stream)."""
    return SimpleNamespace(
        code=_code,
        md=_markdown,
        write=_write,
        output=lambda text: nbformat.v4.new_output("stream", name="stdout", text=text),
    )
