"""Check the printed book (``make book-print``'s PDF) against the notebooks it was printed from.

Reads the PDF with poppler's command-line tools (Debian's ``poppler-utils``: ``pdfinfo``,
``pdftotext``, ``pdfimages``, ``pdffonts``) and reports

* the page count and the file size;
* chapters: every chapter's title (its notebook's first heading) is in the text;
* cut-off lines: every line of every chapter's code cells is in the text (whitespace ignored, so
  a line the print stylesheet wrapped still counts), and no word lies outside its page;
* figures: at least as many images as the chapters have figure outputs;
* math: MathJax's fonts are embedded (Type 3 fonts; a formula left as TeX would use none);
* headings: no page ends with a section heading (the heading belongs on the next page).

Usage::

    python tools/check_pdf.py book/_build/tensorlib.pdf     # exit status 1 on a problem
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
TOOLS = ("pdfinfo", "pdftotext", "pdfimages", "pdffonts")
WORD = re.compile(r'<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">')
PAGE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">')
FOOTER_LINE = re.compile(r"^\d+ / \d+$")


@dataclass
class Report:
    pages: int = 0
    megabytes: float = 0.0
    chapters: list[str] = field(default_factory=list)
    code_lines: int = 0
    problems: list[str] = field(default_factory=list)
    images: int = 0
    figures: int = 0
    math_fonts: int = 0


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def _run(*command: str) -> str:
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def squash(text: str) -> str:
    """``text`` without whitespace: wrapping a line in print does not change it."""
    return re.sub(r"\s+", "", text)


def _notebook(name: str) -> dict:
    return json.loads((BOOK / f"{name}.ipynb").read_text(encoding="utf-8"))


def chapter_names(book: Path = BOOK) -> list[str]:
    return sorted(path.stem for path in book.glob("[0-9][0-9]_*.ipynb"))


def chapter_title(notebook: dict) -> str:
    first = "".join(notebook["cells"][0]["source"]).splitlines()[0]
    return first.lstrip("#").strip()


def code_lines(notebook: dict) -> list[str]:
    """The lines a reader sees in the chapter's code cells (directive lines are shown as labels)."""
    lines = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        for line in "".join(cell["source"]).splitlines():
            if line.strip() and not line.startswith("#|"):
                lines.append(line)
    return lines


def headings(notebook: dict) -> list[str]:
    """Every section heading of a chapter, as printed (no '#', no Markdown code marks)."""
    found = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if re.match(r"#{2,4} ", line):
                    found.append(re.sub(r"[`*]", "", line.lstrip("#")).strip())
    return found


def figures(notebook: dict) -> int:
    return sum(
        1
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {}) or "image/svg+xml" in output.get("data", {})
    )


def without_footers(text: str) -> str:
    """``text`` without the page numbers, so a line wrapped across a page break reads whole."""
    return "\n".join(line for line in text.splitlines() if not FOOTER_LINE.match(line.strip()))


def missing_lines(lines: list[str], text: str) -> list[str]:
    """The lines of ``lines`` that do not occur in ``text`` (whitespace and page numbers
    ignored)."""
    flat = squash(without_footers(text))
    return [line for line in lines if squash(line) not in flat]


def words_off_page(bbox_html: str, slack: float = 0.5) -> list[str]:
    """Words (with their page number) that reach beyond the left or right edge of their page."""
    found = []
    for number, page in enumerate(bbox_html.split("<page ")[1:], start=1):
        size = PAGE.match("<page " + page)
        if size is None:
            continue
        width = float(size.group(1))
        for match in WORD.finditer(page):
            x_min, x_max = float(match.group(1)), float(match.group(3))
            word = page[match.end() : page.find("<", match.end())]
            if all("\ue000" <= char <= "\uf8ff" for char in word):
                continue  # MathJax's stretched delimiters: private-use glyphs with loose boxes
            if x_min < -slack or x_max > width + slack:
                found.append(
                    f"page {number}: {word!r} at x = {x_min:.0f}..{x_max:.0f} of {width:.0f}"
                )
    return found


def pages_ending_with_a_heading(page_texts: list[str], titles: list[str]) -> list[str]:
    """Pages whose last line (before the page number) is one of ``titles``.

    Pages of the table of contents (more than five lines that are headings) are not counted.
    """
    wanted = {squash(title).lower() for title in titles if len(squash(title)) > 3}
    found = []
    for number, text in enumerate(page_texts, start=1):
        lines = [
            line.strip()
            for line in text.splitlines()
            if line.strip() and not FOOTER_LINE.match(line.strip())
        ]
        if not lines or sum(squash(line).lower() in wanted for line in lines) > 5:
            continue
        tails = {squash(lines[-1]).lower(), squash(" ".join(lines[-2:])).lower()}
        hit = tails & wanted
        if hit:
            found.append(f"page {number} ends with the heading {lines[-1]!r}")
    return found


def check(pdf: Path, book: Path = BOOK) -> Report:
    report = Report()
    missing = missing_tools()
    if missing:
        raise SystemExit(
            f"{', '.join(missing)} not found: install them with `apt-get install poppler-utils`"
        )
    info = _run("pdfinfo", str(pdf))
    report.pages = int(
        re.search(r"^Pages:\s+(\d+)", info, flags=re.M).group(1)  # type: ignore[union-attr]
    )
    report.megabytes = round(pdf.stat().st_size / 1e6, 1)
    # -layout keeps each printed line whole (plain mode moves the part after a run of spaces away)
    text = _run("pdftotext", "-layout", "-enc", "UTF-8", str(pdf), "-")
    page_texts = text.split("\f")
    flat = squash(text).lower()
    all_headings: list[str] = []
    for name in chapter_names(book):
        notebook = json.loads((book / f"{name}.ipynb").read_text(encoding="utf-8"))
        title = chapter_title(notebook)
        report.chapters.append(title)
        if squash(title).lower() not in flat:
            report.problems.append(f"chapter {name} ({title!r}) is not in the PDF")
        lines = code_lines(notebook)
        report.code_lines += len(lines)
        report.problems += [
            f"{name}: code line missing or cut off: {line.strip()[:100]!r}"
            for line in missing_lines(lines, text)
        ]
        report.figures += figures(notebook)
        all_headings += headings(notebook)
    bbox = _run("pdftotext", "-bbox", str(pdf), "-")
    report.problems += [f"cut off at the margin: {word}" for word in words_off_page(bbox)[:50]]
    report.images = len(
        [line for line in _run("pdfimages", "-list", str(pdf)).splitlines()[2:] if line.strip()]
    )
    if report.images < report.figures:
        report.problems.append(
            f"{report.images} images in the PDF, the chapters have {report.figures} figures"
        )
    # MathJax's web fonts are embedded as Type 3 fonts; every other text is in DejaVu TrueType.
    report.math_fonts = len(
        [line for line in _run("pdffonts", str(pdf)).splitlines() if "Type 3" in line]
    )
    if report.math_fonts == 0:
        report.problems.append("no MathJax font is embedded: the formulas were not typeset")
    report.problems += pages_ending_with_a_heading(page_texts, all_headings)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pdf", type=Path)
    args = parser.parse_args(argv)
    report = check(args.pdf)
    print(
        f"{args.pdf}: {report.pages} pages, {report.megabytes} MB, {len(report.chapters)} "
        "chapters, "
        f"{report.code_lines} code lines, {report.images} images for {report.figures} figures, "
        f"{report.math_fonts} MathJax fonts"
    )
    for problem in report.problems:
        print("  " + problem)
    print(f"{len(report.problems)} problems")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
