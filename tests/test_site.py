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
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

pytestmark = pytest.mark.site

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
    assert remote_css_references("@font-face{src:url('https://x.org/f.woff2')}") == [
        "https://x.org/f.woff2"
    ]
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
    untypeset: math.filter(el => !el.querySelector('mjx-container')).map(el => el.textContent.slice(0, 80)),
    errors: [...document.querySelectorAll('mjx-merror')].map(el => el.getAttribute('data-mjx-error') || el.textContent),
  };
}"""
IMAGES_JS = """async () => {
  const images = [...document.images];
  for (const img of images) img.loading = 'eager';
  const broken = [];
  for (const img of images) {
    try { await img.decode(); } catch (e) { }
    if (!img.complete || img.naturalWidth === 0) broken.push(img.getAttribute('src'));
  }
  return {count: images.length, broken};
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


def _page_problems(page: Any, name: str, links: _LinkChecker) -> tuple[list[str], int]:
    """Everything wrong with the loaded page, and how many formulas MathJax typeset on it."""
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

    hrefs = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
    problems += links.problems(hrefs)
    return [f"{name}: {problem}" for problem in problems], math["typeset"]


@pytest.fixture(scope="module")
def chromium() -> Path:
    """Debian's Chromium; checked before the site is built, so a skip costs nothing."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: install it with `apt-get install chromium`")
    return CHROMIUM


def test_every_page_works_offline_in_chromium(chromium: Path, site: Path, server: str) -> None:
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
    links = _LinkChecker(site, server)
    current = [""]  # the page being checked, for the event handlers' messages

    def route(route_: Any, request: Any) -> None:
        host = urlsplit(request.url).hostname or ""
        if request.url.startswith(("data:", "blob:", "about:")) or host in LOCAL_HOSTS:
            route_.continue_()
        else:
            remote_requests.append(f"{current[0]}: {request.method} {request.url}")
            route_.abort()

    def on_console(message: Any) -> None:
        if message.type == "error":
            problems.append(f"{current[0]}: console error: {message.text}")

    def on_response(response: Any) -> None:
        if response.status >= 400 and not response.url.endswith("/favicon.ico"):
            problems.append(f"{current[0]}: HTTP {response.status} for {response.url}")

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(chromium), args=CHROMIUM_ARGS, headless=True
        )
        context = browser.new_context(service_workers="block")
        context.route("**/*", route)
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
            found, typeset[name] = _page_problems(page, name, links)
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

    print("formulas typeset per page:", typeset)
    assert typeset.get("intro.html", 0) > 0, "the intro's formulas were not typeset"
    problems += [f"request left 127.0.0.1: {request}" for request in remote_requests]
    assert problems == [], f"{len(problems)} problems on {len(pages)} pages:\n" + "\n".join(
        problems
    )
