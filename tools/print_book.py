"""Print the one-page book (Sphinx's singlehtml build) to a PDF with headless Chromium, offline.

``tools/build_book.py --print`` (``make book-print``) builds ``_build/singlehtml/`` and then calls
:func:`print_pdf`, which

* serves the folder on 127.0.0.1 and opens it in Debian's ``/usr/bin/chromium`` through
  Playwright with the print stylesheet (``tools/static/tensorlib.css``, ``@media print``: code
  wraps, no sidebars, buttons or search box, headings kept with what follows, a chapter per page);
* waits until MathJax has typeset every formula and every figure has loaded;
* writes a table of contents (parts, chapters and their sections, each a link) at the front, and
  gives the document its title (the theme's sidebar title read "None");
* scales down, in place, each display formula, table or figure wider than the page, so nothing
  is cut at the margin;
* prints A4 with page numbers in the footer and the headings as the PDF's outline (bookmarks).

Every request must stay on 127.0.0.1; one that does not is an error. ``tools/check_pdf.py``
checks the result.

Usage::

    python tools/print_book.py book/_build/singlehtml book/_build/tensorlib.pdf
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-sync",
]
TITLE = "tensorlib: deep learning from the tensor up"
# A4 at 96 px per inch, less the margins below: the width the page is laid out at.
MARGIN_MM = {"top": 14, "bottom": 16, "left": 14, "right": 14}
PRINTABLE_WIDTH_PX = round((210 - MARGIN_MM["left"] - MARGIN_MM["right"]) / 25.4 * 96)
FOOTER = (
    '<div style="font-size:8px; width:100%; text-align:center; color:#555;">'
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)

# The contents: every document's first heading (a chapter, the solutions, a reference page) and
# the h2 sections of the chapters, as links; the part headings of the sidebar's toctree become
# group headings. Sphinx's singlehtml marks each document with <span id="document-NAME">.
CONTENTS_JS = """(title) => {
  document.title = title;
  // the book theme's own print contents (chapters only) would come first and repeat this one
  const themeContents = document.getElementById('jb-print-docs-body');
  if (themeContents) themeContents.remove();
  const main = document.querySelector('article.bd-article')
    || document.querySelector('[role=main]');
  const nav = document.createElement('nav');
  nav.className = 'tl-print-toc';
  nav.innerHTML = '<h1>' + title + '</h1><h2>Contents</h2>';
  const list = nav.appendChild(document.createElement('ol'));
  const text = (heading) => heading.textContent.replace(/#$/, '').trim();
  const headingOf = (section) =>
    section.querySelector(':scope > h1, :scope > h2, :scope > h3, :scope > h4');
  for (const marker of document.querySelectorAll('span[id^="document-"]')) {
    const name = marker.id.slice('document-'.length);
    const section = marker.nextElementSibling;
    const heading = section && section.tagName === 'SECTION' ? headingOf(section) : null;
    if (!heading || !section.id) continue;
    const item = list.appendChild(document.createElement('li'));
    const link = item.appendChild(document.createElement('a'));
    link.href = '#' + section.id;
    link.textContent = text(heading);
    item.className = /^\\d\\d_/.test(name) ? 'tl-toc-chapter' : 'tl-toc-part';
    if (!/^\\d\\d_/.test(name)) continue;
    const sub = item.appendChild(document.createElement('ol'));
    for (const child of section.querySelectorAll(':scope > section[id]')) {
      const h = headingOf(child);
      if (!h) continue;
      const a = sub.appendChild(document.createElement('li'))
        .appendChild(document.createElement('a'));
      a.href = '#' + child.id;
      a.textContent = text(h);
    }
  }
  main.insertBefore(nav, main.firstChild);
  return list.querySelectorAll('a').length;
}"""

# Scale whatever still reaches past the text's right edge (a long display formula, a wide table
# or figure) down to fit: CSS zoom shrinks layout and text alike, so the PDF keeps real text.
FIT_JS = """() => {
  const article = document.querySelector('article.bd-article') || document.body;
  const right = article.getBoundingClientRect().right;
  let scaled = 0;
  for (const el of document.querySelectorAll(
    'mjx-container, .bd-article table, .bd-article img, dl.py > dt, .bd-article pre'
  )) {
    const box = el.getBoundingClientRect();
    if (box.width > 0 && box.right > right + 1) {
      el.style.zoom = Math.max(0.3, (right - box.left - 2) / box.width).toFixed(3);
      scaled += 1;
    }
  }
  return scaled;
}"""

TYPESET_JS = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  const images = [...document.images];
  for (const img of images) { img.loading = 'eager'; try { await img.decode(); } catch (e) {} }
  return {
    formulas: document.querySelectorAll('mjx-container').length,
    errors: document.querySelectorAll('mjx-merror').length,
    untypeset: [...document.querySelectorAll('.math')]
      .filter(el => !el.querySelector('mjx-container')).length,
    images: images.length,
    broken: images.filter(img => !img.complete || img.naturalWidth === 0)
      .map(img => img.getAttribute('src')),
  };
}"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def print_pdf(folder: Path, output: Path, chromium: Path = CHROMIUM) -> dict[str, Any]:
    """Print ``folder/intro.html`` (a singlehtml build) to ``output``; return what was found."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise SystemExit("playwright is not installed; run `make install`") from None
    if not chromium.exists():
        raise SystemExit(f"{chromium} not found: install it with `apt-get install chromium`")
    page_file = folder / "intro.html"
    if not page_file.is_file():
        raise SystemExit(f"{page_file} is missing: build the one-page book first")
    remote: list[str] = []
    started = time.monotonic()
    with serve(folder) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": PRINTABLE_WIDTH_PX, "height": 1000})

        def route(route_: Any, request: Any) -> None:
            host = urlsplit(request.url).hostname or ""
            if request.url.startswith(("data:", "blob:", "about:")) or host in {
                "127.0.0.1",
                "localhost",
            }:
                route_.continue_()
            else:
                remote.append(request.url)
                route_.abort()

        context.route("**/*", route)
        page = context.new_page()
        page.set_default_timeout(300_000)
        page.emulate_media(media="print")
        page.goto(base + "intro.html", wait_until="load")
        found = page.evaluate(TYPESET_JS)
        found["contents"] = page.evaluate(CONTENTS_JS, TITLE)
        found["scaled"] = page.evaluate(FIT_JS)
        output.parent.mkdir(parents=True, exist_ok=True)
        page.pdf(
            path=str(output),
            format="A4",
            print_background=True,
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=FOOTER,
            margin={side: f"{mm}mm" for side, mm in MARGIN_MM.items()},
            outline=True,
        )
        browser.close()
    found["remote"] = remote
    found["seconds"] = round(time.monotonic() - started, 1)
    if remote:
        raise SystemExit(f"the printable book asked for other hosts: {remote[:5]}")
    if found["errors"] or found["untypeset"] or found["broken"]:
        raise SystemExit(f"the printable book is incomplete: {found}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the singlehtml build (holds intro.html)")
    parser.add_argument("output", type=Path, help="the PDF to write")
    args = parser.parse_args(argv)
    found = print_pdf(args.folder, args.output)
    print(f"PDF written to {args.output} ({args.output.stat().st_size / 1e6:.1f} MB): {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
