"""The PDF checker (tools/check_pdf.py) catches what a broken printed book would show.

The whole printed book is built and checked by ``tests/test_site.py``'s printable-book test (it
takes minutes); these tests prove, on small inputs, that each check can fail: a code line cut at
the margin, a word outside its page, a page ending on a heading, a missing chapter. One of them
prints a two-line page with Chromium, as ``tools/print_book.py`` does, with the line clipped and
then wrapped.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import check_pdf  # noqa: E402

LONG = (
    "result = some_function(first_argument, second_argument, third_argument) + another_call(x, "
    "y, z)  # a comment"
)


def test_missing_lines_finds_a_clipped_line_and_accepts_a_wrapped_one() -> None:
    wrapped = (
        "result = some_function(first_argument, second_argument,\n   third_argument) + "
        "another_call(x, y, z)  # a comment"
    )
    assert check_pdf.missing_lines([LONG], wrapped) == []
    clipped = "result = some_function(first_argument, second_argument, third_argu"
    assert check_pdf.missing_lines([LONG], clipped) == [LONG]


def test_words_off_page_finds_a_word_past_the_edge() -> None:
    page = (
        '<page width="595.9" height="842.9">'
        '<word xMin="40.0" yMin="50.0" xMax="80.0" yMax="60.0">inside</word>'
        '<word xMin="560.0" yMin="70.0" xMax="640.5" yMax="80.0">outside</word>'
        '<word xMin="-900.0" yMin="70.0" xMax="900.0" yMax="80.0">\ue154</word>'
        "</page>"
    )
    found = check_pdf.words_off_page(page)
    assert len(found) == 1 and "'outside'" in found[0], found


def test_a_line_wrapped_across_a_page_break_is_whole() -> None:
    across = (
        "result = some_function(first_argument, second_argument, third_argument) + "
        "another_call(x,\n  41 / 700\n\f\n y, z)  # a comment"
    )
    assert check_pdf.missing_lines([LONG], across) == []


def test_pages_ending_with_a_heading() -> None:
    pages = [
        "text\n3. Broadcasting and its adjoint\n  12 / 700\n",
        "a paragraph ends here.\n  13 / 700\n",
    ]
    titles = ["3. Broadcasting and its adjoint", "Summary"] + [
        f"{k}. Section {k}" for k in range(1, 8)
    ]
    found = check_pdf.pages_ending_with_a_heading(pages, titles)
    assert found == ["page 1 ends with the heading '3. Broadcasting and its adjoint'"]
    contents = "\n".join(titles[2:]) + "\n3. Broadcasting and its adjoint\n 1 / 700"
    assert check_pdf.pages_ending_with_a_heading([contents], titles) == []


def test_the_notebook_readers() -> None:
    notebook = {
        "cells": [
            {
                "cell_type": "markdown",
                "source": ["# 1. Tensors: memory layout\n", "\n", "## 2. `Views`\n"],
            },
            {
                "cell_type": "code",
                "source": ["#| export\n", "x = 1\n", "\n", "y = 2"],
                "outputs": [{"output_type": "display_data", "data": {"image/png": "..."}}],
            },
        ]
    }
    assert check_pdf.chapter_title(notebook) == "1. Tensors: memory layout"
    assert check_pdf.code_lines(notebook) == ["x = 1", "y = 2"]
    assert check_pdf.headings(notebook) == ["2. Views"]
    assert check_pdf.figures(notebook) == 1


CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.skipif(
    not CHROMIUM.exists() or bool(check_pdf.missing_tools()),
    reason="needs chromium and poppler-utils",
)
def test_a_line_clipped_in_print_is_caught_and_a_wrapped_one_is_not(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    results = {}
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page()
        for name, style in [
            ("clipped", "white-space: pre; overflow: hidden"),
            ("wrapped", "white-space: pre-wrap; overflow-wrap: anywhere"),
        ]:
            page.set_content(f'<pre style="font-size: 12pt; width: 120mm; {style}">{LONG}</pre>')
            pdf = tmp_path / f"{name}.pdf"
            page.pdf(path=str(pdf), format="A4")
            text = subprocess.run(
                ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
            ).stdout
            results[name] = check_pdf.missing_lines([LONG], text)
        browser.close()
    assert results == {"clipped": [LONG], "wrapped": []}, results
