"""Build the tensorlib website: copy MathJax into the book, then run Jupyter Book strictly.

The site must work with no internet, so MathJax 3 is served by the site itself. Its files come
from the PyPI package ``django-static-mathjax`` (installed with the ``book`` extra), whose es5
bundle is copied into ``book/_mathjax/mathjax/`` (gitignored). ``_config.yml`` publishes that
folder through Sphinx's ``html_extra_path`` and points ``mathjax_path`` at it. The copy is not
put in ``_static/``: Jupyter Book adds a ``<script>`` tag for every ``.js`` file found there.

The build uses the notebooks' stored outputs (nbval proves they are real), rebuilds every page
(an incremental build would not repeat the warnings of unchanged pages) and treats every
warning, including nitpicky missing references, as an error.

Usage::

    python tools/build_book.py                      # book/ -> book/_build/html
    python tools/build_book.py --path-output DIR    # -> DIR/_build/html
    python tools/build_book.py --mathjax-only       # only refresh book/_mathjax/
    python tools/build_book.py --print              # the whole book as one page,
                                                    # book/_build/singlehtml/intro.html, printed
                                                    # to book/_build/tensorlib.pdf

The PDF is printed by headless Chromium (``tools/print_book.py``, Debian's ``/usr/bin/chromium``)
and checked by ``tools/check_pdf.py`` when poppler-utils is installed.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
MATHJAX_DIST = "django-static-mathjax"
MATHJAX_DIST_VERSION = "3.2.2.1"
MATHJAX_FOLDER = "_mathjax"  # html_extra_path in book/_config.yml
MATHJAX_SUBDIR = "mathjax"  # published as <site>/mathjax/, mathjax_path in book/_config.yml
MATHJAX_ENTRY = "tex-chtml.js"
# latest.js reloads MathJax from a CDN; node-main.js is for Node.js. Neither may be published.
MATHJAX_SKIP = ("latest.js", "node-main.js")
BUILD_FLAGS = ["-W", "-n", "--keep-going", "--all"]
PDF_NAME = "tensorlib.pdf"  # next to the singlehtml folder: book/_build/tensorlib.pdf


def mathjax_source() -> Path:
    """Return the es5 folder of the installed MathJax package, checking its version."""
    try:
        version = importlib.metadata.version(MATHJAX_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise SystemExit(
            f"{MATHJAX_DIST} is not installed; run `make install` (it is in the book extra)"
        ) from None
    if version != MATHJAX_DIST_VERSION:
        raise SystemExit(f"expected {MATHJAX_DIST}=={MATHJAX_DIST_VERSION}, found {version}")
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{MATHJAX_DIST} is installed but its `mathjax` package cannot be found")
    es5 = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax" / "es5"
    if not (es5 / MATHJAX_ENTRY).is_file():
        raise SystemExit(f"expected {es5 / MATHJAX_ENTRY} in {MATHJAX_DIST}, it is missing")
    return es5


def install_mathjax(book_dir: Path = BOOK) -> Path:
    """Copy MathJax's es5 bundle to ``book_dir/_mathjax/mathjax/`` unless it is already there.

    A stamp file (a dotfile, which html_extra_path does not publish) records the package and
    version copied; a missing or different stamp replaces the whole folder.
    """
    source = mathjax_source()
    target = book_dir / MATHJAX_FOLDER / MATHJAX_SUBDIR
    stamp = target / ".copied-from"
    expected = f"{MATHJAX_DIST}=={MATHJAX_DIST_VERSION} {source}\n"
    if (target / MATHJAX_ENTRY).is_file() and stamp.is_file() and stamp.read_text() == expected:
        return target
    if target.parent.exists():
        shutil.rmtree(target.parent)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(*MATHJAX_SKIP))
    stamp.write_text(expected)
    return target


def jupyter_book_executable() -> str:
    """The jupyter-book script next to this Python, so the build uses the project's venv."""
    candidate = Path(sys.executable).with_name("jupyter-book")
    if candidate.exists():
        return str(candidate)
    found = shutil.which("jupyter-book")
    if found is None:
        raise SystemExit("jupyter-book is not installed; run `make install`")
    return found


def build(book_dir: Path = BOOK, path_output: Path | None = None, builder: str = "html") -> Path:
    """Build the site strictly and return the folder holding ``index.html``.

    ``builder="singlehtml"`` builds the printable book: every page in one ``index.html``
    (math by the same local MathJax, figures in ``_images/``), for a browser's "Print to PDF".
    """
    install_mathjax(book_dir)
    command = [
        jupyter_book_executable(),
        "build",
        str(book_dir),
        *BUILD_FLAGS,
        "--builder",
        builder,
    ]
    if path_output is not None:
        command += ["--path-output", str(path_output)]
    result = subprocess.run(command, check=False)
    if result.returncode != 0:
        raise SystemExit(f"jupyter-book build failed (exit code {result.returncode})")
    html = (path_output if path_output is not None else book_dir) / "_build" / builder
    published = html / MATHJAX_SUBDIR / MATHJAX_ENTRY
    if not published.is_file():
        raise SystemExit(f"the build finished but {published} is missing")
    return html


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--book", type=Path, default=BOOK, help="book source folder")
    parser.add_argument("--path-output", type=Path, help="write DIR/_build/html instead")
    parser.add_argument("--mathjax-only", action="store_true", help="only copy MathJax")
    parser.add_argument(
        "--print", action="store_true", help="build the one-page book and print it to PDF"
    )
    parser.add_argument(
        "--no-pdf", action="store_true", help="with --print: the one-page book only"
    )
    args = parser.parse_args(argv)
    if args.mathjax_only:
        print(f"MathJax copied to {install_mathjax(args.book)}")
        return 0
    html = build(args.book, args.path_output, "singlehtml" if args.print else "html")
    print(f"site built in {html}")
    if args.print and not args.no_pdf:
        print_pdf(html, html.parent / PDF_NAME)
    return 0


def print_pdf(folder: Path, pdf: Path) -> None:
    """Print the one-page book to ``pdf`` and check it (tools/print_book.py, tools/check_pdf.py)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import check_pdf
    import print_book

    found = print_book.print_pdf(folder, pdf)
    print(f"PDF written to {pdf} ({pdf.stat().st_size / 1e6:.1f} MB in {found['seconds']} s)")
    if check_pdf.missing_tools():
        print("not checked: install poppler-utils for tools/check_pdf.py")
        return
    report = check_pdf.check(pdf)
    print(f"{report.pages} pages; {len(report.problems)} problems")
    if report.problems:
        raise SystemExit("the PDF has problems:\n" + "\n".join(report.problems[:40]))


if __name__ == "__main__":
    sys.exit(main())
