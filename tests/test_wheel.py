"""The package builds as a wheel that installs and imports in a fresh virtual environment.

The wheel is built from a copy of the repository's packaging inputs (its top-level files and
``tensorlib/``), so a stale ``build/`` folder cannot leak old modules into the wheel and the
repository is left untouched. numpy comes from the package registry or pip's cache.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

pytestmark = pytest.mark.slow

PROBE = """
import importlib, importlib.metadata, importlib.resources, json, pkgutil, sys
import tensorlib
modules = sorted(info.name for info in pkgutil.walk_packages(tensorlib.__path__, "tensorlib."))
for name in modules:
    importlib.import_module(name)
print(json.dumps({
    "file": tensorlib.__file__,
    "version": tensorlib.__version__,
    "dist_version": importlib.metadata.version("tensorlib"),
    "requires": importlib.metadata.requires("tensorlib") or [],
    "py_typed": importlib.resources.files("tensorlib").joinpath("py.typed").is_file(),
    "modules": modules,
    "prefix": sys.prefix,
}))
"""


def _clean_env() -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(command: list[str], cwd: Path, timeout: int = 600) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _source_modules(package: Path) -> set[str]:
    return {
        p.relative_to(package.parent).as_posix()
        for p in package.rglob("*.py")
        if "__pycache__" not in p.parts
    }


def test_wheel_installs_and_imports_in_a_fresh_venv(repo_root: Path, tmp_path: Path):
    source = tmp_path / "src"
    source.mkdir()
    for item in repo_root.iterdir():
        if item.is_file():
            shutil.copy2(item, source / item.name)
    shutil.copytree(
        repo_root / "tensorlib",
        source / "tensorlib",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )

    wheels = tmp_path / "wheels"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            ".",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheels),
        ],
        cwd=source,
    )
    (wheel,) = wheels.glob("tensorlib-*.whl")
    project = tomllib.loads((repo_root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    version = project["version"]
    assert wheel.name.startswith(f"tensorlib-{version}-py3-none-any")

    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    packaged = {name for name in names if name.endswith(".py")}
    assert packaged == _source_modules(repo_root / "tensorlib"), (
        "the wheel must hold exactly the package's modules"
    )
    assert "tensorlib/py.typed" in names
    for data in (
        "gpt/corpus/pydoc_topics.txt",
        "gpt/corpus/LICENSE-PSF.txt",
        "gpt/long_run/log.csv",
    ):
        assert f"tensorlib/{data}" in names, f"the wheel lacks the package data tensorlib/{data}"
    assert not any(
        name.startswith(("tests/", "tools/", "book/", "solutions/", "benchmarks/"))
        for name in names
    )

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", str(wheel)], cwd=tmp_path)
    probe = json.loads(_run([str(python), "-c", PROBE], cwd=tmp_path).strip().splitlines()[-1])

    assert Path(probe["file"]).resolve().is_relative_to(venv.resolve()), (
        f"imported {probe['file']}, not the installed wheel"
    )
    assert Path(probe["prefix"]).resolve() == venv.resolve()
    assert probe["version"] == probe["dist_version"] == version
    assert probe["py_typed"] is True
    runtime = [requirement for requirement in probe["requires"] if "extra ==" not in requirement]
    assert sorted(runtime) == sorted(project["dependencies"])
    # numpy only
    assert [
        re.match(r"[A-Za-z0-9_.-]+", requirement).group(0) for requirement in runtime
    ] == ["numpy"]
    expected = sorted(
        "tensorlib."
        + name.removesuffix(".py")
        .removesuffix("/__init__")
        .removeprefix("tensorlib/")
        .replace("/", ".")
        for name in packaged
        if name != "tensorlib/__init__.py"
    )
    assert probe["modules"] == expected  # every module imports from the installed copy

    # the shipped corpus is package data: a few training steps on it, from a directory outside the
    # repository
    run_dir = tmp_path / "elsewhere"
    run_dir.mkdir()
    flags = [
        "--max-steps",
        "3",
        "--warmup-steps",
        "0",
        "--n-layer",
        "1",
        "--n-head",
        "2",
        "--n-embd",
        "16",
        "--block-size",
        "16",
        "--batch-size",
        "4",
        "--eval-batches",
        "1",
        "--no-progress",
    ]
    out = _run([str(python), "-m", "tensorlib.gpt", "train", "--out", "run", *flags], cwd=run_dir)
    assert out.startswith("step 3: validation loss"), out
    assert (
        (run_dir / "run" / "ckpt.pt").is_file()
        and (run_dir / "run" / "log.csv").is_file()
    )

    # tqdm is the `train` extra, not installed here: the trainer prints a plain progress line
    # instead
    assert any(r.startswith("tqdm") and 'extra == "train"' in r for r in probe["requires"])
    done = subprocess.run(
        [str(python), "-m", "tensorlib.gpt", "train", "--out", "run2", *flags[:-1]],
        cwd=run_dir,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert [
        line.split(":")[0] for line in done.stderr.splitlines() if line.startswith("step ")
    ] == ["step 1/3", "step 2/3", "step 3/3"]
    assert "val=" in done.stderr and "tok_s=" in done.stderr
