"""Sphinx extension for the tensorlib website: it works on every screen and loads only what a page
needs.

Loaded by ``book/_config.yml`` (``sphinx.local_extensions``), with ``tools/static/`` (the CSS and
``tensorlib-site.js``). It

* loads ``tensorlib-site.js`` on every page: the sidebar buttons that work at every width (the
  themes' double ``.primary-toggle``, see the script), search queries that understand ``tl.``,
  ``F.`` and ``nn.``, API entries and section titles ranked first, snippets without TeX, and the
  search index fetched when a search starts;
* switches on the theme's search-as-you-type, so results appear while typing;
* keeps MathJax off pages without a formula (Sphinx loads it on a page whose toctree includes
  one, such as the Solutions and Reference landing pages);
* after the build: removes the search index's ``<script>`` from every page but the search page
  and Font Awesome's 1.5 MB script from every page (the theme's CSS draws the icons with the web
  font), gives the exercise and solution notebooks download names of their own
  (``01_tensors_exercises.ipynb``, ``01_tensors_solutions.ipynb``; a chapter stays
  ``01_tensors.ipynb``), so a browser does not rename the second and third, and publishes the
  favicon at ``/favicon.ico`` as well (browsers ask for it there);
* in the one-page book (singlehtml, ``make book-print``): gives the sidebar its title (the theme
  showed "None") and hides the search box, which has no search page to go to there.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
SITE_JS = "tensorlib-site.js"
FAVICON = STATIC / "favicon.ico"
MATHJAX_ENTRY = "tex-chtml.js"  # tools/build_book.py
SEARCH_INDEX_SCRIPT = re.compile(r'\s*<script src="(?:\.\./)*searchindex\.js"></script>')
# Font Awesome's SVG framework (1.5 MB) on every page: the theme's stylesheet already draws the same
# icons from Font Awesome's web font, so the script only repeated them.
FONTAWESOME_SCRIPT = re.compile(
    r'\s*<script defer src="(?:\.\./)*_static/scripts/fontawesome\.js[^"]*"></script>'
)
ALIASES_JS = "tensorlib-aliases.js"  # written into _static/ after the build
# The book's import aliases: "tl.save" names tensorlib.save, whose reference entry is the
# canonical tensorlib.serialization.nested.save. The search ranks that entry first.
ALIAS_MODULES = {
    "tl": "tensorlib",
    "nn": "tensorlib.nn",
    "F": "tensorlib.nn.functional",
    "optim": "tensorlib.optim",
}
# Where a download comes from -> the suffix its file name gets on the site.
DOWNLOAD_SUFFIXES = {"exercises": "_exercises", "solutions": "_solutions"}


def _configure(app: Sphinx, config: Any) -> None:
    options = dict(config.html_theme_options or {})
    options.setdefault("search_as_you_type", True)
    config.html_theme_options = options


def _add_static(app: Sphinx) -> None:
    if app.builder.format == "html" and str(STATIC) not in map(str, app.config.html_static_path):
        app.config.html_static_path.append(str(STATIC))


def _is_mathjax(script: Any) -> bool:
    """MathJax itself, or the inline ``window.MathJax = {...}`` configuration before it."""
    filename = str(getattr(script, "filename", script) or "")
    body = str(getattr(script, "attributes", {}).get("body", ""))
    return filename.endswith(MATHJAX_ENTRY) or body.startswith("window.MathJax")


def _mathjax_only_with_math(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    scripts = context.get("script_files")
    body = context.get("body") or ""
    if scripts and 'class="math' not in body:
        scripts[:] = [script for script in scripts if not _is_mathjax(script)]


def _single_page_title(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """The one-page book's sidebar title: the theme shows ``docstitle``, which singlehtml leaves
    None."""
    if app.builder.name == "singlehtml" and not context.get("docstitle"):
        context["docstitle"] = app.config.html_title or app.config.project


def download_name(source: str) -> str:
    """The name a downloaded notebook gets: ``../exercises/01_x.ipynb`` ->
    ``01_x_exercises.ipynb``."""
    path = PurePosixPath(source.replace("\\", "/"))
    suffix = next(
        (DOWNLOAD_SUFFIXES[part] for part in path.parts[:-1] if part in DOWNLOAD_SUFFIXES), ""
    )
    return f"{path.stem}{suffix}{path.suffix}"


def _rename_downloads(app: Sphinx, outdir: Path) -> dict[str, str]:
    """Rename the files in ``_downloads/`` and return old -> new relative URLs."""
    renamed = {}
    for source, (_docnames, dest) in app.env.dlfiles.items():
        old = PurePosixPath(dest)
        new = old.with_name(download_name(source))
        if new == old or not (outdir / "_downloads" / old).is_file():
            continue
        (outdir / "_downloads" / old).replace(outdir / "_downloads" / new)
        renamed[f"_downloads/{old}"] = f"_downloads/{new}"
    return renamed


def search_aliases() -> dict[str, str]:
    """``{"tl.save": "tensorlib.serialization.nested.save", ...}``: each alias's canonical name."""
    aliases = {}
    for alias, module_name in ALIAS_MODULES.items():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", None) or dir(module):
            obj = getattr(module, name, None)
            where, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
            if name.startswith("_") or not (inspect.isclass(obj) or inspect.isroutine(obj)):
                continue
            if (
                isinstance(where, str)
                and where.startswith("tensorlib")
                and isinstance(qualname, str)
            ):
                aliases[f"{alias}.{name}"] = f"{where}.{qualname}"
    return aliases


def _write_aliases(outdir: Path) -> None:
    """``_static/tensorlib-aliases.js``, and a ``<script>`` for it on the search page."""
    body = json.dumps(search_aliases(), sort_keys=True, separators=(",", ":"))
    (outdir / "_static" / ALIASES_JS).write_text(
        f"var TL_SEARCH_ALIASES = {body};\n", encoding="utf-8"
    )
    search = outdir / "search.html"
    if search.is_file():
        text = search.read_text(encoding="utf-8")
        tag = f'<script src="_static/{ALIASES_JS}"></script>'
        if tag not in text:
            search.write_text(
                text.replace(
                    '<script src="searchindex.js"', tag + '\n<script src="searchindex.js"', 1
                ),
                encoding="utf-8",
            )


def _finish(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    renamed = _rename_downloads(app, outdir)
    for page in outdir.rglob("*.html"):
        if page.relative_to(outdir).parts[0] in {"_static", "mathjax", "_sources"}:
            continue
        text = original = page.read_text(encoding="utf-8")
        for old, new in renamed.items():
            text = text.replace(old, new)
        if page.relative_to(outdir).as_posix() != "search.html":
            text = SEARCH_INDEX_SCRIPT.sub("", text)
        text = FONTAWESOME_SCRIPT.sub("", text)
        if text != original:
            page.write_text(text, encoding="utf-8")
    if FAVICON.is_file():
        shutil.copyfile(FAVICON, outdir / "favicon.ico")
    if app.builder.name == "singlehtml":
        _no_search_box(outdir)
    else:
        _write_aliases(outdir)


def _no_search_box(outdir: Path) -> None:
    """The one-page book has no search page, so its search box (a 404) is hidden."""
    style = (
        "<style>.search-button, .search-button-field, #pst-search-dialog { display: none "
        "!important; }</style>"
    )
    for page in outdir.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        if style not in text and "</head>" in text:
            page.write_text(text.replace("</head>", style + "\n</head>", 1), encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", _configure)
    app.connect("builder-inited", _add_static)
    app.add_js_file(SITE_JS, priority=300)
    app.connect("html-page-context", _mathjax_only_with_math, priority=900)
    app.connect("html-page-context", _single_page_title)
    app.connect("build-finished", _finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
