"""Sphinx extension for the tensorlib website: keep every page offline and free of JS errors.

Loaded by ``book/_config.yml`` (``sphinx.local_extensions``). It

* drops sphinx-thebe's scripts from every page. Jupyter Book 1.x always loads sphinx-thebe;
  we do not use Thebe (it runs code on mybinder.org), and with Sphinx 7 its inline
  ``const THEBE_JS_URL = "https://unpkg.com/..."`` is written twice per page, which is a
  JavaScript error ("Identifier 'THEBE_JS_URL' has already been declared");
* warns, which fails the strict build, when the local MathJax copy is missing: a plain
  ``jupyter-book build book`` without ``tools/build_book.py`` would otherwise publish pages
  whose formulas never render.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

MATHJAX_COPY = Path("_mathjax") / "mathjax" / "tex-chtml.js"  # see tools/build_book.py


def _is_thebe_script(script: Any) -> bool:
    filename = str(getattr(script, "filename", script) or "")
    body = str(getattr(script, "attributes", {}).get("body", ""))
    return filename.endswith("sphinx-thebe.js") or "THEBE_JS_URL" in body or "thebe@" in filename


def _check_mathjax_copy(app: Sphinx) -> None:
    if app.builder.format == "html" and not (Path(app.srcdir) / MATHJAX_COPY).is_file():
        logger.warning(
            "%s is missing: build the book with `make book` (tools/build_book.py), "
            "which copies MathJax there",
            MATHJAX_COPY,
        )


def _drop_thebe_scripts(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    scripts = context.get("script_files")
    if scripts:
        scripts[:] = [script for script in scripts if not _is_thebe_script(script)]


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _check_mathjax_copy)
    app.connect("html-page-context", _drop_thebe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
