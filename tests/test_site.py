"""The website: it builds without a warning and every page works offline in a real browser.

The module builds the book once (``tools/build_book.py --path-output <tmp>``: stored notebook
outputs, ``-W -n --keep-going``), then

* scans the built HTML and CSS for anything a page would fetch from another host;
* serves the site on 127.0.0.1 and opens every page in Chromium (Debian's ``/usr/bin/chromium``
  driven by Playwright) to check that it loads without console errors, that MathJax typeset
  every formula, that every image loaded, that every internal link and anchor resolves and that
  no request left 127.0.0.1 (all requests are intercepted; remote ones are recorded and aborted).

The browser test is skipped when ``/usr/bin/chromium`` is absent (``apt-get install chromium``);
``playwright install`` is never used, it would download a browser.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

# slow: the site build and the browser checks take about 11 minutes on two cores; `make test-slow`
# (which CI runs after `make test`) runs them
pytestmark = [pytest.mark.site, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
# Attributes through which a page fetches something by itself (links in <a> are not fetched).
FETCHING_ATTRIBUTES = {
    "script": ("src",),
    "link": ("href",),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "frame": ("src",),
    "source": ("src", "srcset"),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "input": ("src",),
}
CSS_REMOTE = re.compile(r"""(?:url\(\s*["']?|@import\s+["'])\s*((?:https?:)?//[^"')\s]+)""", re.I)
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
URL_IN_REFRESH = re.compile(r"url\s*=\s*(\S+)", re.I)


# ---------------------------------------------------------------------------------------------
# Static checks: pure functions, tested on snippets so we know they can fail.


def _is_remote(url: str) -> bool:
    """True when ``url`` names a host other than this machine (http, https or protocol-relative)."""
    url = url.strip()
    parts = urlsplit(url)
    if url.startswith("//") or parts.scheme in {"http", "https", "ws", "wss", "ftp"}:
        return (parts.hostname or "") not in LOCAL_HOSTS
    return False


class _ReferenceParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.remote: list[str] = []
        self.ids: set[str] = set()
        self.refresh: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        for name in ("id", "name"):
            if values.get(name):
                self.ids.add(values[name])
        for name in FETCHING_ATTRIBUTES.get(tag, ()):
            for url in values.get(name, "").split(","):  # srcset: "a.png 1x, b.png 2x"
                url = url.strip().split(" ")[0] if url.strip() else ""
                if url and _is_remote(url):
                    self.remote.append(f"<{tag} {name}={url}>")
        if values.get("style"):
            self.remote += [f"<{tag} style=url({u})>" for u in CSS_REMOTE.findall(values["style"])]
        if tag == "meta" and values.get("http-equiv", "").lower() == "refresh":
            match = URL_IN_REFRESH.search(values.get("content", ""))
            if match:
                self.refresh.append(match.group(1).strip("'\""))
                if _is_remote(match.group(1)):
                    self.remote.append(f"<meta refresh {match.group(1)}>")
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.remote += [f"<style> url({u})" for u in CSS_REMOTE.findall(data)]


def parse_html(text: str) -> _ReferenceParser:
    parser = _ReferenceParser()
    parser.feed(text)
    parser.close()
    return parser


def remote_references(html: str) -> list[str]:
    """Every resource an HTML page would fetch from another host by itself."""
    return parse_html(html).remote


def remote_css_references(css: str) -> list[str]:
    """Every remote ``url(...)`` or ``@import`` in a stylesheet (comments excluded)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    return CSS_REMOTE.findall(css)


def test_remote_reference_scanner_catches_remote_resources() -> None:
    bad = [
        '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>',
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Lato">',
        '<link rel="preconnect" href="//fonts.gstatic.com">',
        '<img src="http://example.org/plot.png">',
        '<img src="a.png" srcset="a.png 1x, https://example.org/b.png 2x">',
        '<iframe src="https://mybinder.org/v2/gh/x"></iframe>',
        '<div style="background: url(https://example.org/bg.png)"></div>',
        "<style>@import 'https://example.org/x.css';</style>",
        '<meta http-equiv="refresh" content="0; url=https://example.org/">',
    ]
    for snippet in bad:
        assert remote_references(snippet), f"the scanner missed the remote resource in {snippet}"
    good = (
        '<script src="../_static/doctools.js?v=1"></script>'
        '<script src="http://127.0.0.1:8000/x.js"></script>'
        '<link rel="stylesheet" href="_static/theme.css">'
        '<img src="_images/plot.png"><a href="https://pytorch.org/docs">PyTorch</a>'
        '<meta http-equiv="refresh" content="0; url=intro.html">'
    )
    assert remote_references(good) == []
    assert remote_css_references(
        "@font-face{src:url('https://x.org/f.woff2')}"
    ) == ["https://x.org/f.woff2"]
    assert remote_css_references("/* see https://x.org */ a{background:url(../img.png)}") == []


# ---------------------------------------------------------------------------------------------
# The build, shared by every test of this module.


@dataclass
class Build:
    returncode: int
    log: str = field(repr=False)
    html: Path


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, str(ROOT / "tools" / "build_book.py"), "--path-output", str(out)]
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=900
    )
    log = ANSI_COLOUR.sub("", result.stdout + result.stderr)
    return Build(result.returncode, log, out / "_build" / "html")


@pytest.fixture(scope="module")
def site(build: Build) -> Path:
    if build.returncode != 0:
        pytest.fail("the book did not build; see test_book_builds_without_warnings")
    return build.html


def _pages(site: Path) -> list[Path]:
    skipped = {"_static", "_sources", "_images", "_downloads", "mathjax"}
    return sorted(
        path
        for path in site.rglob("*.html")
        if not skipped.intersection(path.relative_to(site).parts[:1])
    )


def test_book_builds_without_warnings(build: Build) -> None:
    warnings = [line for line in build.log.splitlines() if "WARNING" in line or "ERROR" in line]
    assert build.returncode == 0, "jupyter-book build failed:\n" + "\n".join(
        warnings or build.log.splitlines()[-40:]
    )
    assert warnings == [], "the build passed but printed warnings:\n" + "\n".join(warnings)


def test_every_toc_entry_has_a_page(site: Path) -> None:
    toc = (BOOK / "_toc.yml").read_text()
    files = re.findall(r"^\s*-?\s*(?:file|root):\s*(\S+)", toc, flags=re.M)
    assert "intro" in files and len(files) >= 5, f"unexpected _toc.yml entries: {files}"
    missing = [name for name in files if not (site / f"{name}.html").is_file()]
    assert missing == [], f"_toc.yml lists pages that were not built: {missing}"
    solutions = sorted(p.stem for p in (ROOT / "solutions").glob("*.ipynb"))
    built = sorted(p.stem for p in (site / "solutions").glob("*.html"))
    assert built == solutions, f"solutions/ holds {solutions}, the site shows {built}"


def test_the_notation_page_is_built_with_its_tables_and_links_every_chapter(site: Path) -> None:
    page = site / "notation.html"
    assert page.is_file(), "book/notation.md was not built (is it in _toc.yml?)"
    html = page.read_text(encoding="utf-8")
    assert html.count("<tr") >= 30, "the notation page lost its tables of symbols"
    chapters = sorted(p.stem for p in BOOK.glob("[0-9][0-9]_*.ipynb"))
    linked = set(re.findall(r'href="(\d\d_\w+)\.html[#"]', html))
    assert [name for name in chapters if name not in linked] == [], (
        "the notation page does not link every chapter"
    )


def test_mathjax_is_published_locally(site: Path) -> None:
    assert (site / "mathjax" / "tex-chtml.js").is_file(), "MathJax was not copied into the site"
    assert (site / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir(), "no fonts"
    assert not (site / "mathjax" / "latest.js").exists(), "latest.js loads MathJax from a CDN"
    assert not (site / "_static" / "tex-chtml.js").exists(), "MathJax must not be in _static"


def test_no_page_fetches_from_another_host(site: Path) -> None:
    problems = []
    for page in _pages(site):
        problems += [
            f"{page.relative_to(site)}: {ref}" for ref in remote_references(page.read_text())
        ]
    for css in site.rglob("*.css"):
        problems += [
            f"{css.relative_to(site)}: {u}" for u in remote_css_references(css.read_text())
        ]
    assert problems == [], "remote resources in the built site:\n" + "\n".join(problems)


# ---------------------------------------------------------------------------------------------
# The browser test.


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


# Visible text outside code, scripts and typeset math: raw TeX here means MathJax missed it.
VISIBLE_TEXT_JS = """() => {
  const skip = 'pre, code, script, style, textarea, mjx-container, .highlight, .MathJax';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const parts = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(skip)) continue;
    if (!parent.checkVisibility()) continue;
    parts.push(node.textContent);
  }
  return parts.join(' ');
}"""
MATH_JS = """() => {
  const math = [...document.querySelectorAll('.math')];
  return {
    math: math.length,
    typeset: document.querySelectorAll('mjx-container').length,
    untypeset: math.filter(el => !el.querySelector('mjx-container'))
      .map(el => el.textContent.slice(0, 80)),
    errors: [...document.querySelectorAll('mjx-merror')]
      .map(el => el.getAttribute('data-mjx-error') || el.textContent),
  };
}"""
IMAGES_JS = r"""async () => {
  const images = [...document.images];
  for (const img of images) img.loading = 'eager';
  const broken = [];
  for (const img of images) {
    try { await img.decode(); } catch (e) { }
    if (!img.complete || img.naturalWidth === 0) broken.push(img.getAttribute('src'));
  }
  // docutils fills a missing alt with the image's file name: that is no description either.
  const src = img => (img.getAttribute('src') || '').split('/').pop();
  const noAlt = images.filter(img => {
    const alt = (img.getAttribute('alt') || '').trim();
    return !alt || alt.endsWith(src(img)) || /\.(png|jpe?g|svg|gif)$/i.test(alt);
  }).map(src);
  return {count: images.length, broken, noAlt};
}"""
# Switch on MathJax's speech explorer, as a reader would from MathJax's menu: it loads the
# speech rule engine and its locale files, which must also come from the site.
SPEECH_JS = """() => {
  const menu = MathJax.startup.document.menu.menu;
  menu.pool.lookup('speech').setValue(true);
  menu.pool.lookup('explorer').setValue(true);
}"""
RAW_TEX = re.compile(r"\$\$|\\\(|\\\)|\\\[|\\\]|\\begin\{|\\frac|\$[^$\n]*[\\^_{}][^$\n]*\$")


class _LinkChecker:
    """Checks links into the site: the file must exist and so must the anchor (each link once)."""

    def __init__(self, site: Path, base: str) -> None:
        self.site, self.base = site, base
        self.checked: set[str] = set()
        self._ids: dict[Path, set[str]] = {}

    def _ids_of(self, path: Path) -> set[str]:
        if path not in self._ids:
            self._ids[path] = parse_html(path.read_text(errors="replace")).ids
        return self._ids[path]

    def problems(self, hrefs: list[str]) -> list[str]:
        found = []
        for href in hrefs:
            # Links to other sites are not fetched by the page, so they are not checked.
            if href in self.checked or not href.startswith(self.base):
                continue
            self.checked.add(href)
            path = unquote(urlsplit(href).path).lstrip("/")
            target = self.site / path
            if path == "" or target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                found.append(f"broken link {href}")
                continue
            fragment = unquote(urlsplit(href).fragment)
            if fragment and target.suffix == ".html" and fragment not in self._ids_of(target):
                found.append(f"link to a missing anchor {href}")
        return found


def _page_problems(
    page: Any, name: str, links: _LinkChecker, no_alt: dict[str, list[str]] | None = None
) -> tuple[list[str], int]:
    """Everything wrong with the loaded page, and how many formulas MathJax typeset on it.

    Images without alt text are collected in ``no_alt`` (page -> image files) when given.
    """
    problems = []
    has_mathjax = page.evaluate(
        "() => [...document.scripts].some(s => /mathjax\\/tex-(chtml|svg)\\.js/.test(s.src))"
    )
    if has_mathjax:
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
        page.evaluate("() => MathJax.startup.promise.then(() => true)")
    math = page.evaluate(MATH_JS)
    if math["math"] and not has_mathjax:
        problems.append(f"{math['math']} formulas but MathJax is not loaded")
    if math["math"] and math["typeset"] == 0:
        problems.append(f"{math['math']} formulas, none typeset")
    if math["untypeset"]:
        problems.append(f"formulas not typeset: {math['untypeset'][:3]}")
    if math["errors"]:
        problems.append(f"MathJax errors: {math['errors'][:3]}")

    raw = RAW_TEX.findall(page.evaluate(VISIBLE_TEXT_JS))
    if raw:
        problems.append(f"raw TeX left in the visible text: {raw[:5]}")

    images = page.evaluate(IMAGES_JS)
    if images["broken"]:
        problems.append(f"images that did not load: {images['broken']}")
    if images["noAlt"] and no_alt is not None:
        no_alt[name] = images["noAlt"]

    hrefs = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
    problems += links.problems(hrefs)
    return [f"{name}: {problem}" for problem in problems], math["typeset"]


@pytest.fixture(scope="module")
def chromium() -> Path:
    """Debian's Chromium; checked before the site is built, so a skip costs nothing."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: install it with `apt-get install chromium`")
    return CHROMIUM


@dataclass
class Browsed:
    """What visiting every page of the served site in Chromium found."""

    pages: list[str]
    problems: list[str]
    typeset: dict[str, int]
    no_alt: dict[str, list[str]]


@pytest.fixture(scope="module")
def browsed(chromium: Path, site: Path, server: str) -> Browsed:
    """Open every page once; the tests below assert on what was found."""
    sync_api = pytest.importorskip("playwright.sync_api")

    # index.html only redirects (a meta refresh); its target must exist.
    for target in parse_html((site / "index.html").read_text()).refresh:
        assert (site / target).is_file(), f"index.html redirects to missing {target}"
    pages = [p.relative_to(site).as_posix() for p in _pages(site)]
    pages.remove("index.html")
    assert "intro.html" in pages, "no intro page was built"

    problems: list[str] = []
    remote_requests: list[str] = []
    typeset: dict[str, int] = {}
    no_alt: dict[str, list[str]] = {}
    links = _LinkChecker(site, server)
    current = [""]  # the page being checked, for the event handlers' messages

    def on_console(message: Any) -> None:
        if message.type == "error":
            problems.append(f"{current[0]}: console error: {message.text}")

    def on_response(response: Any) -> None:
        if response.status >= 400 and not response.url.endswith("/favicon.ico"):
            problems.append(f"{current[0]}: HTTP {response.status} for {response.url}")

    with sync_api.sync_playwright() as playwright:
        browser, context = _open_browser(playwright, chromium, remote_requests, current)
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.on("console", on_console)
        page.on("pageerror", lambda error: problems.append(f"{current[0]}: page error: {error}"))
        page.on("response", on_response)

        for name in pages:
            current[0] = name
            response = page.goto(server + name, wait_until="load")
            if response is None or response.status != 200:
                problems.append(f"{name}: HTTP {response.status if response else 'no response'}")
                continue
            found, typeset[name] = _page_problems(page, name, links, no_alt)
            problems += found
            if name == "intro.html" and typeset[name]:
                try:
                    with page.expect_response(lambda r: "sre/mathmaps/en.json" in r.url):
                        page.evaluate(SPEECH_JS)
                except sync_api.TimeoutError:
                    problems.append("intro.html: the speech explorer did not load its mathmaps")
            try:  # give late requests time to show up; they are intercepted either way
                page.wait_for_load_state("networkidle", timeout=10_000)
            except sync_api.TimeoutError:
                pass  # a busy machine can keep a request open; routing still records it
        browser.close()

    problems += [f"request left 127.0.0.1: {request}" for request in remote_requests]
    return Browsed(pages, problems, typeset, no_alt)


def _open_browser(
    playwright: Any, chromium: Path, remote_requests: list[str], current: list[str]
) -> tuple[Any, Any]:
    """Headless Chromium whose context aborts (and records) every request that leaves 127.0.0.1."""

    def route(route_: Any, request: Any) -> None:
        host = urlsplit(request.url).hostname or ""
        if request.url.startswith(("data:", "blob:", "about:")) or host in LOCAL_HOSTS:
            route_.continue_()
        else:
            remote_requests.append(f"{current[0]}: {request.method} {request.url}")
            route_.abort()

    browser = playwright.chromium.launch(
        executable_path=str(chromium), args=CHROMIUM_ARGS, headless=True
    )
    context = browser.new_context(service_workers="block", accept_downloads=True)
    context.route("**/*", route)
    return browser, context


def test_every_page_works_offline_in_chromium(browsed: Browsed) -> None:
    print("formulas typeset per page:", browsed.typeset)
    assert browsed.typeset.get("intro.html", 0) > 0, "the intro's formulas were not typeset"
    assert browsed.problems == [], (
        f"{len(browsed.problems)} problems on {len(browsed.pages)} pages:\n"
        + "\n".join(browsed.problems)
    )


def test_every_image_has_alt_text(browsed: Browsed) -> None:
    """A figure's alt text comes from its cell's ``mystnb.image.alt`` metadata (CONTRIBUTING.md)."""
    assert any(name.startswith("0") for name in browsed.pages)
    assert browsed.no_alt == {}, "images without alt text, by page:\n" + "\n".join(
        f"{page}: {len(files)} image(s): {', '.join(files)}"
        for page, files in sorted(browsed.no_alt.items())
    )


# ---------------------------------------------------------------------------------------------
# The site as a reference: API pages, export labels, search, downloads, the printable book.

sys.path.insert(0, str(ROOT / "tools"))
import api_reference  # noqa: E402
import sphinx_site  # noqa: E402

EXPORT_DIRECTIVE_IN_CODE = re.compile(r"<pre><span></span>(<span[^>]*>)?#\|")


def test_the_directive_check_can_fail() -> None:
    shown = '<div class="highlight"><pre><span></span><span class="c1">#| export nn.init</span>'
    assert EXPORT_DIRECTIVE_IN_CODE.search(shown)
    assert not EXPORT_DIRECTIVE_IN_CODE.search('<pre><span></span><span class="kn">import</span>')


def _is_exported(cell: dict) -> bool:
    """Whether a cell's leading ``#|`` lines include an ``export`` directive."""
    if cell["cell_type"] != "code":
        return False
    for line in "".join(cell["source"]).splitlines():
        if not line.startswith("#|"):
            return False
        if line[2:].split()[:1] == ["export"]:
            return True
    return False


def _notebook_pages(site: Path) -> dict[str, Path]:
    """Every chapter and solution page, with the notebook it was built from."""
    pages = {f"{path.stem}.html": path for path in sorted(BOOK.glob("[0-9][0-9]_*.ipynb"))}
    pages.update(
        {
            f"solutions/{path.stem}.html": path
            for path in sorted((ROOT / "solutions").glob("*.ipynb"))
        }
    )
    return pages


def test_every_public_name_has_an_entry_on_the_reference_pages(site: Path) -> None:
    ids: set[str] = set()
    for page in sorted((site / "reference").glob("*.html")):
        ids |= parse_html(page.read_text()).ids
    modules = api_reference.collect()
    missing = [
        entry.canonical
        for info in modules
        for entry in info.entries
        if entry.canonical not in ids
    ]
    missing += [f"module {info.name}" for info in modules if f"module-{info.name}" not in ids]
    assert missing == [], (
        "public names without an entry on the built reference pages: " + ", ".join(missing)
    )
    chapter = (site / "reference" / "04_layers.html").read_text()
    assert (
        "Derived in" in chapter and 'href="../04_layers.html#' in chapter
    ), "no link to the derivation"


def test_code_cells_show_export_labels_not_directives(site: Path) -> None:
    problems = []
    for name, notebook in _notebook_pages(site).items():
        html = (site / name).read_text()
        if EXPORT_DIRECTIVE_IN_CODE.search(html):
            problems.append(f"{name}: a code cell still shows its '#|' directive")
        exports = sum(1 for cell in json.loads(notebook.read_text())["cells"] if _is_exported(cell))
        labels = html.count('class="tl-export-label"')
        if labels < exports:
            problems.append(f"{name}: {exports} exported cells but {labels} export labels")
    assert problems == [], "\n".join(problems)
    html = (site / "03_init.html").read_text()
    assert re.search(
        r'class="tl-export-label">exported to <a '
        r'[^>]*href="reference/03_init.html#module-tensorlib.nn.init"',
        html,
    )


def test_inline_names_link_to_the_reference(site: Path) -> None:
    html = (site / "04_layers.html").read_text()
    links = re.findall(
        r'<a class="reference internal" href="(reference/[^"]+)"[^>]*>'
        r'<code class="[^"]*tl-api-link',
        html,
    )
    assert len(links) > 20, f"only {len(links)} inline names of chapter 4 link to the reference"
    assert any(link.endswith("#tensorlib.nn.modules.linear.Linear") for link in links)


def test_search_finds_the_chapters_that_define_a_name(
    browsed: Browsed, chromium: Path, server: str
) -> None:
    """Type "softmax" into the search box of the served site and follow it to the results."""
    sync_api = pytest.importorskip("playwright.sync_api")
    modules = api_reference.collect()
    expected = {
        f"{entry.derived_in[0]}.html"
        for info in modules
        for entry in info.entries
        if entry.name == "softmax" and entry.derived_in
    }
    assert expected, "no entry named softmax"
    remote: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser, context = _open_browser(playwright, chromium, remote, ["search"])
        page = context.new_page()
        page.set_default_timeout(30_000)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(server + "intro.html", wait_until="load")
        page.locator("button.search-button__button:visible").first.click()
        field = page.locator('input[name="q"]:visible').first
        field.fill("softmax")
        field.press("Enter")
        page.wait_for_url("**/search.html?q=softmax*")
        page.wait_for_function(
            "() => { const s = document.querySelector('#search-results .search-summary, "
            "#search-results p');"
            " return s && /found|did not match/i.test(s.textContent); }"
        )
        hrefs = page.evaluate(
            "() => [...document.querySelectorAll('#search-results ul.search li a')].map(a => "
            "a.href)"
        )
        browser.close()
    found = {urlsplit(href).path.lstrip("/") for href in hrefs}
    assert errors == [] and remote == [], f"errors {errors}, remote requests {remote}"
    assert expected <= found, (
        f"searching softmax found {sorted(found)}, not the chapters {sorted(expected)}"
    )
    assert any(path.startswith("reference/") for path in found), (
        "the reference is not in the results"
    )


def test_every_notebook_page_offers_its_notebook_for_download(
    browsed: Browsed, chromium: Path, site: Path, server: str
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    pages = _notebook_pages(site)
    assert len(pages) >= 8
    problems: list[str] = []
    remote: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser, context = _open_browser(playwright, chromium, remote, ["download"])
        page = context.new_page()
        page.set_default_timeout(30_000)
        for name, notebook in pages.items():
            page.goto(server + name, wait_until="load")
            link = page.locator("p.tl-download a[download]")
            if link.count() != 1:
                problems.append(f"{name}: {link.count()} download links")
                continue
            with page.expect_download() as info:
                link.click()
            download = info.value
            expected = sphinx_site.download_name(str(notebook.relative_to(ROOT)))
            if download.suggested_filename != expected:
                problems.append(f"{name}: downloads {download.suggested_filename}, not {expected}")
            if Path(download.path()).read_bytes() != notebook.read_bytes():
                problems.append(
                    f"{name}: the downloaded notebook differs from {notebook.relative_to(ROOT)}"
                )
            if name.startswith("solutions/"):
                continue
            exercises = ROOT / "exercises" / notebook.name
            link = page.locator(f'a[download][href$="/{notebook.stem}_exercises.ipynb"]')
            if link.count() != 1:
                problems.append(
                    f"{name}: {link.count()} links to its exercises as "
                    f"{notebook.stem}_exercises.ipynb"
                )
                continue
            with page.expect_download() as info:
                link.click()
            download = info.value
            if download.suggested_filename != f"{notebook.stem}_exercises.ipynb":
                problems.append(f"{name}: the exercises download as {download.suggested_filename}")
            if Path(download.path()).read_bytes() != exercises.read_bytes():
                problems.append(
                    f"{name}: the downloaded exercises differ from exercises/{notebook.name}"
                )
        browser.close()
    names = [
        sphinx_site.download_name(f"{folder}/01_tensors.ipynb")
        for folder in ("book", "../exercises", "solutions")
    ]
    assert len(set(names)) == 3, (
        f"chapter, exercises and solutions download under the same name: {names}"
    )
    assert problems == [] and remote == [], "\n".join(problems + remote)


@pytest.mark.slow
class TestPrintableBook:
    """The one-page book, a class of its own so that ``pytest -n 2 --dist loadscope`` runs its
    build (the longest test) on one worker while the other builds and browses the site."""

    def test_printable_book_is_one_page_with_math_and_figures(
        self, tmp_path_factory: pytest.TempPathFactory, chromium: Path
    ) -> None:
        """`make book-print`: every page on one HTML page (Sphinx's singlehtml builder),
        printed to a PDF.

        The build prints the PDF with Chromium and checks it with tools/check_pdf.py (every
        chapter, every code line in the text, nothing off the page, figures, math, no page
        ending on a heading).
        """
        out = tmp_path_factory.mktemp("print")
        command = [
            sys.executable,
            str(ROOT / "tools" / "build_book.py"),
            "--print",
            "--path-output",
            str(out),
        ]
        result = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=2400
        )
        log = ANSI_COLOUR.sub("", result.stdout + result.stderr)
        warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
        assert result.returncode == 0 and warnings == [], "\n".join(
            warnings or log.splitlines()[-30:]
        )
        folder = out / "_build" / "singlehtml"
        single = folder / "intro.html"
        html = single.read_text()
        for notebook in sorted(BOOK.glob("[0-9][0-9]_*.ipynb")):
            assert f'id="document-{notebook.stem}"' in html, (
                f"{notebook.stem} is not in the printable book"
            )
        import tensorlib

        tensor_entry = f"{tensorlib.Tensor.__module__}.{tensorlib.Tensor.__qualname__}"
        assert 'id="document-reference/04_layers"' in html and f'id="{tensor_entry}"' in html
        assert remote_references(html) == [], remote_references(html)[:5]
        assert '<p class="title logo__title">None</p>' not in html, "the sidebar title reads None"
        assert re.search(r"<style>[^<]*\.search-button[^<]*display: none", html), (
            "the one-page book shows a dead search box"
        )
        import check_pdf

        pdf = out / "_build" / "tensorlib.pdf"
        assert pdf.is_file(), "make book-print wrote no PDF"
        if not check_pdf.missing_tools():
            report = check_pdf.check(pdf)
            print(
                f"the PDF: {report.pages} pages, {report.megabytes} MB, {report.code_lines} code "
                f"lines, {report.images} images"
            )
            assert report.problems == [], "\n".join(report.problems[:30])
            assert len(report.chapters) == 8 and report.pages > 300 and report.math_fonts > 0
        sync_api = pytest.importorskip("playwright.sync_api")
        handler = functools.partial(_QuietHandler, directory=str(folder))
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        remote: list[str] = []
        try:
            with sync_api.sync_playwright() as playwright:
                browser, context = _open_browser(playwright, chromium, remote, ["print"])
                page = context.new_page()
                page.set_default_timeout(120_000)
                page.goto(
                    f"http://127.0.0.1:{httpd.server_address[1]}/intro.html", wait_until="load"
                )
                page.wait_for_function(
                    "() => window.MathJax && MathJax.startup && MathJax.startup.promise"
                )
                page.evaluate("() => MathJax.startup.promise.then(() => true)")
                math = page.evaluate(MATH_JS)
                images = page.evaluate(IMAGES_JS)
                browser.close()
        finally:
            httpd.shutdown()
            httpd.server_close()
        assert remote == [], remote[:5]
        assert math["typeset"] > 100 and not math["errors"], (
            f"MathJax: {math['typeset']} typeset, errors {math['errors'][:3]}"
        )
        assert images["count"] >= 5 and images["broken"] == [], f"figures: {images}"


# ---------------------------------------------------------------------------------------------
# Every screen: a phone (390 px), a tablet (900 px) and a desktop (1280 px), in Chromium.

PHONE, TABLET, DESKTOP = 390, 900, 1280
VISIBLE_SEARCH_BOXES_JS = """() => [...document.querySelectorAll(
    '.search-button-field, .search-button__button, form.bd-search input[name=q]')]
  .filter(el => el.checkVisibility({visibilityProperty: true}) && !el.closest('dialog:not([open])'))
  .length"""
# How many columns of code fit in a code cell: its inner width over the width of one character.
CODE_COLUMNS_JS = """() => {
  const pre = document.querySelector('div.cell_input div.highlight pre');
  const probe = document.createElement('span');
  probe.textContent = 'x'.repeat(100);
  pre.appendChild(probe);
  const column = probe.getBoundingClientRect().width / 100;
  probe.remove();
  const style = getComputedStyle(pre);
  return (pre.clientWidth - parseFloat(style.paddingLeft)
    - parseFloat(style.paddingRight)) / column;
}"""
OUTPUTS_THAT_SCROLL_JS = """() => [...document.querySelectorAll('div.cell_output pre')]
  .filter(pre => pre.scrollWidth > pre.clientWidth + 1).map(pre => pre.textContent.slice(0, 60))"""
CODE_THAT_SCROLLS_JS = """() => [...document.querySelectorAll('div.cell_input pre')]
  .filter(pre => pre.scrollWidth > pre.clientWidth + 1).map(pre => pre.textContent.slice(0, 60))"""
CUT_HEADINGS_JS = """() => [
  ...document.querySelectorAll('.bd-article h1, .bd-article h2, .bd-article h3, dl.py > dt')
]
  .filter(el => el.scrollWidth > el.clientWidth + 1
    || el.getBoundingClientRect().right > window.innerWidth + 1)
  .map(el => el.textContent.slice(0, 60))"""


@contextmanager
def _browser_page(chromium: Path, width: int, remote: list[str]) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(chromium), args=CHROMIUM_ARGS, headless=True
        )
        context = browser.new_context(
            viewport={"width": width, "height": 800}, has_touch=True, service_workers="block"
        )

        def route(route_: Any, request: Any) -> None:
            host = urlsplit(request.url).hostname or ""
            if request.url.startswith(("data:", "blob:", "about:")) or host in LOCAL_HOSTS:
                route_.continue_()
            else:
                remote.append(request.url)
                route_.abort()

        context.route("**/*", route)
        page = context.new_page()
        page.set_default_timeout(30_000)
        try:
            yield page
        finally:
            browser.close()


@pytest.mark.parametrize("width", [PHONE, TABLET])
def test_the_menu_buttons_open_the_navigation_and_a_chapter(
    chromium: Path, server: str, width: int
) -> None:
    """Tap ☰: the navigation opens; tap a chapter in it: the chapter opens. Tap "contents": the
    page's sections."""
    remote: list[str] = []
    with _browser_page(chromium, width, remote) as page:
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(server + "02_autograd.html", wait_until="load")
        assert page.locator(".primary-toggle:visible").count() == 1, "no single visible ☰ button"
        page.locator(".primary-toggle:visible").tap()
        dialog = page.locator("#pst-primary-sidebar-modal")
        page.wait_for_function("() => document.getElementById('pst-primary-sidebar-modal').open")
        chapter = dialog.locator("a.reference", has_text="Initialization").first
        assert chapter.is_visible(), "the open navigation does not show chapter 3"
        chapter.tap()
        page.wait_for_url("**/03_init.html*")
        assert "Initialization" in page.locator("h1").first.text_content()

        page.locator(".secondary-toggle:visible").tap()
        page.wait_for_function("() => document.getElementById('pst-secondary-sidebar-modal').open")
        sections = page.locator("#pst-secondary-sidebar-modal a.nav-link")
        assert sections.count() > 10 and sections.first.is_visible(), (
            "the contents button shows no sections"
        )
    assert errors == [] and remote == [], f"errors {errors}, remote requests {remote}"


@pytest.mark.parametrize("width", [PHONE, TABLET, DESKTOP])
def test_each_width_shows_one_search_box(chromium: Path, server: str, width: int) -> None:
    remote: list[str] = []
    with _browser_page(chromium, width, remote) as page:
        for name in ("intro.html", "02_autograd.html", "reference/04_layers.html"):
            page.goto(server + name, wait_until="load")
            assert page.evaluate(VISIBLE_SEARCH_BOXES_JS) == 1, (
                f"{name} at {width} px: not exactly one search box"
            )


def test_code_fits_100_columns_and_outputs_wrap_on_a_desktop(chromium: Path, server: str) -> None:
    remote: list[str] = []
    with _browser_page(chromium, DESKTOP, remote) as page:
        for name in ("02_autograd.html", "05_attention.html"):
            page.goto(server + name, wait_until="load")
            columns = page.evaluate(CODE_COLUMNS_JS)
            assert columns >= 100, (
                f"{name} at {DESKTOP} px: code cells show {columns:.0f} columns, not 100"
            )
            assert page.evaluate(OUTPUTS_THAT_SCROLL_JS) == [], (
                f"{name}: outputs that scroll sideways"
            )


CHAPTER_PAGES = [
    f"{prefix}{name}.html"
    for prefix in ("", "solutions/")
    for name in (
        "01_tensors", "02_autograd", "03_init", "04_layers",
        "05_attention", "06_optimizers", "07_checkpointing", "08_gpt",
    )
]


def test_no_code_cell_scrolls_sideways_on_a_desktop(chromium: Path, server: str) -> None:
    """Notebook code is at most 100 characters a line (ruff's E501) and 100 columns fit at
    1280 px, so no code cell of a chapter or a solution scrolls sideways."""
    remote: list[str] = []
    scrolling = {}
    with _browser_page(chromium, DESKTOP, remote) as page:
        for name in CHAPTER_PAGES:
            page.goto(server + name, wait_until="load")
            cells = page.evaluate(CODE_THAT_SCROLLS_JS)
            if cells:
                scrolling[name] = cells
    assert not scrolling, f"code cells that scroll sideways at {DESKTOP} px: {scrolling}"


PHONE_PAGES = [
    "intro.html",
    "notation.html",
    "01_tensors.html",
    "02_autograd.html",
    "05_attention.html",
    "08_gpt.html",
    "solutions/05_attention.html",
    "reference/00_packages.html",
    "reference/04_layers.html",
]


def test_nothing_widens_a_phone_page(chromium: Path, server: str) -> None:
    """Long inline code and math, tables and reference headings stay within 390 px (or scroll in
    their box)."""
    problems = []
    remote: list[str] = []
    with _browser_page(chromium, PHONE, remote) as page:
        for name in PHONE_PAGES:
            page.goto(server + name, wait_until="load")
            if page.evaluate("() => !!window.MathJax"):
                page.wait_for_function(
                    "() => window.MathJax && MathJax.startup && MathJax.startup.promise"
                )
                page.evaluate("() => MathJax.startup.promise.then(() => true)")
            width = page.evaluate("() => document.documentElement.scrollWidth")
            if width > PHONE:
                problems.append(f"{name}: the page is {width} px wide on a {PHONE} px screen")
            cut = page.evaluate(CUT_HEADINGS_JS)
            if cut:
                problems.append(f"{name}: headings cut off: {cut[:3]}")
    assert problems == [] and remote == [], "\n".join(problems + remote)


def test_search_ranks_the_entry_a_name_names_and_shows_no_tex(chromium: Path, server: str) -> None:
    """Typing "tl.save" lists tensorlib.save's reference entry in the top five, while typing."""
    import tensorlib

    entry = f"{tensorlib.save.__module__}.{tensorlib.save.__qualname__}"
    remote: list[str] = []
    with _browser_page(chromium, DESKTOP, remote) as page:
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(server + "intro.html", wait_until="load")
        assert not any(url.endswith("searchindex.js") for url in requests), (
            "the search index loads with the page"
        )
        page.locator("button.search-button__button:visible").first.click()
        field = page.locator('#pst-search-dialog input[name="q"]')
        field.press_sequentially("tl.save", delay=20)
        page.wait_for_function(
            "() => document.querySelectorAll('#pst-search-dialog ul.search li').length >= 5"
        )
        hrefs = page.evaluate(
            "() => [...document.querySelectorAll('#pst-search-dialog ul.search li a')].map(a => "
            "a.href)"
        )
        assert any(href.endswith(f"#{entry}") for href in hrefs[:5]), (
            f"{entry} is not in the top five: {hrefs[:5]}"
        )

        page.goto(server + "search.html?q=bias+correction", wait_until="load")
        page.wait_for_function(
            "() => [...document.querySelectorAll('#search-results p.context')].length >= 3"
        )
        page.wait_for_timeout(500)
        snippets = page.evaluate(
            "() => [...document.querySelectorAll('#search-results p.context')].map(p => "
            "p.textContent)"
        )
    raw = [snippet for snippet in snippets if RAW_TEX.search(snippet)]
    assert raw == [], f"search snippets with raw TeX: {raw[:3]}"
    assert remote == [], remote


def test_pages_load_mathjax_only_with_math_and_the_favicon_is_served(site: Path) -> None:
    def scripts(name: str) -> str:
        return " ".join(re.findall(r"<script[^>]*>", (site / name).read_text()))

    assert "tex-chtml.js" in scripts("01_tensors.html")
    for name in ("reference.html", "solutions.html", "reference/00_packages.html"):
        assert (
            "tex-chtml.js" not in scripts(name)
            and "MathJax" not in (site / name).read_text().split("</head>")[0]
        ), f"{name} has no formula but loads MathJax"
    for name in ("01_tensors.html", "reference/04_layers.html"):
        assert "searchindex.js" not in scripts(name) and "fontawesome.js" not in scripts(name), name
    assert "searchindex.js" in scripts("search.html")
    assert (
        (site / "favicon.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"
    ), "/favicon.ico is not an icon"
    assert re.search(
        r'<link rel="icon" href="_static/favicon\.ico"', (site / "intro.html").read_text()
    )
