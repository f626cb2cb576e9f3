"""The book's Markdown pages agree with its table of contents and with the chapters they link to.

- ``book/intro.md`` lists every chapter of ``_toc.yml``'s "Chapters" part, in order, numbered from
  1, each named by its notebook's title (the part of the first heading before the colon) and
  linked to its notebook;
- ``book/notation.md`` is in the table of contents and links to every chapter;
- every link from these pages to a section of a chapter (``NN_name.ipynb#anchor``) names a
  heading that exists in that notebook, with the anchor MyST gives it (lower case, punctuation
  dropped, spaces to hyphens).

Each check is a function tested on a small wrong page first, so that it is known to fail.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def toc() -> dict:
    return yaml.safe_load((BOOK / "_toc.yml").read_text(encoding="utf-8"))


def toc_chapters(entries: dict) -> list[str]:
    """The files of the "Chapters" part, in order."""
    parts = [part for part in entries["parts"] if part.get("caption") == "Chapters"]
    assert len(parts) == 1, "_toc.yml has no single part captioned 'Chapters'"
    return [chapter["file"] for chapter in parts[0]["chapters"]]


def toc_files(entries: dict) -> list[str]:
    """Every file the table of contents names (root included)."""
    files = [entries["root"]]
    for part in entries["parts"]:
        files += [chapter["file"] for chapter in part.get("chapters", []) if "file" in chapter]
    return files


def notebook_title(name: str) -> str:
    """The chapter's name: its notebook's first heading, up to the colon."""
    notebook = json.loads((BOOK / f"{name}.ipynb").read_text(encoding="utf-8"))
    first = "".join(notebook["cells"][0]["source"]).splitlines()[0]
    assert first.startswith("# "), f"book/{name}.ipynb does not open with a title"
    return first[2:].split(":", 1)[0].strip()


def anchor(heading: str) -> str:
    """MyST's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.lstrip("#").strip().lower())
    return text.replace(" ", "-")


def notebook_anchors(name: str) -> set[str]:
    notebook = json.loads((BOOK / f"{name}.ipynb").read_text(encoding="utf-8"))
    return {anchor(line) for cell in notebook["cells"] if cell["cell_type"] == "markdown"
            for line in "".join(cell["source"]).splitlines() if re.match(r"#{1,3} ", line)}


def chapter_list_problems(page: str, chapters: list[str], titles: dict[str, str]) -> list[str]:
    """What is wrong with the numbered chapter list of ``page`` (its section "The chapters")."""
    section = page.split("## The chapters", 1)
    if len(section) < 2:
        return ["no section '## The chapters'"]
    body = section[1].split("\n## ", 1)[0]
    items = re.findall(r"^(\d+)\. \[([^\]]+)\]\(([^)]+)\)", body, flags=re.M)
    problems = []
    listed = [target.removesuffix(".ipynb") for _, _, target in items]
    if listed != chapters:
        problems.append(f"the list links {listed}, the table of contents has {chapters}")
    for position, (number, text, target) in enumerate(items, start=1):
        if int(number) != position:
            problems.append(f"item {position} is numbered {number}")
        name = target.removesuffix(".ipynb")
        if name in titles and text != titles[name]:
            problems.append(f"item {number} is called {text!r}, the chapter {titles[name]!r}")
    return problems


def unlinked_chapters(page: str, chapters: list[str]) -> list[str]:
    """The chapters ``page`` has no link to (to the notebook or to one of its sections)."""
    targets = {target.split("#", 1)[0].removesuffix(".ipynb") for _, target in LINK.findall(page)}
    return [chapter for chapter in chapters if chapter not in targets]


def broken_anchors(page: str, anchors_of) -> list[str]:
    """Links ``NN_name.ipynb#anchor`` of ``page`` whose anchor is no heading of that notebook."""
    broken = []
    for text, target in LINK.findall(page):
        match = re.fullmatch(r"(\d\d_\w+)\.ipynb#(.+)", target)
        if match and match.group(2) not in anchors_of(match.group(1)):
            broken.append(f"[{text}]({target})")
    return broken


# -- the checks can fail ---------------------------------------------------------------------------
CHAPTERS = ["01_a", "02_b", "03_c"]
TITLES = {"01_a": "Alpha", "02_b": "Beta", "03_c": "Gamma"}


def test_the_chapter_list_check_catches_a_missing_a_misordered_and_a_misnamed_chapter():
    good = (
        "## The chapters\n\n1. [Alpha](01_a.ipynb): x\n2. [Beta](02_b.ipynb): y\n3. "
        "[Gamma](03_c.ipynb): z\n\n## Next\n"
    )
    assert chapter_list_problems(good, CHAPTERS, TITLES) == []
    assert chapter_list_problems(good.replace("3. [Gamma](03_c.ipynb): z\n", ""), CHAPTERS, TITLES)
    swapped = good.replace("[Alpha](01_a.ipynb)", "[Beta](02_b.ipynb)", 1).replace(
        "2. [Beta](02_b.ipynb)", "2. [Alpha](01_a.ipynb)"
    )
    assert chapter_list_problems(swapped, CHAPTERS, TITLES)
    assert chapter_list_problems(good.replace("[Beta]", "[Bet]"), CHAPTERS, TITLES) == [
        "item 2 is called 'Bet', the chapter 'Beta'"
    ]
    assert chapter_list_problems(
        good.replace("3. [Gamma]", "4. [Gamma]"), CHAPTERS, TITLES
    ) == ["item 3 is numbered 4"]
    assert chapter_list_problems("# no list", CHAPTERS, TITLES) == ["no section '## The chapters'"]


def test_the_link_checks_catch_an_unlinked_chapter_and_a_wrong_anchor():
    page = "see [one](01_a.ipynb#1-start) and [two, section 2](02_b.ipynb#2-wrong)"
    assert unlinked_chapters(page, CHAPTERS) == ["03_c"]
    assert broken_anchors(page, {"01_a": {"1-start"}, "02_b": {"2-right"}}.__getitem__) == [
        "[two, section 2](02_b.ipynb#2-wrong)"
    ]


def test_anchors_are_myst_s():
    assert (
        anchor("## 2.4 Checkpoints: `state_dict` and `load_state_dict`")
        == "24-checkpoints-state_dict-and-load_state_dict"
    )
    assert anchor("### 4.2 PyTorch's initialisation") == "42-pytorchs-initialisation"


# -- the book's pages ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def chapters() -> list[str]:
    found = toc_chapters(toc())
    assert len(found) >= 8 and all((BOOK / f"{name}.ipynb").is_file() for name in found), found
    return found


def test_intro_lists_every_chapter_in_order(chapters):
    page = (BOOK / "intro.md").read_text(encoding="utf-8")
    problems = chapter_list_problems(
        page, chapters, {name: notebook_title(name) for name in chapters}
    )
    assert problems == [], (
        "book/intro.md's chapter list does not match _toc.yml:\n  " + "\n  ".join(problems)
    )


def test_the_notation_page_is_in_the_toc_and_links_every_chapter(chapters):
    assert "notation" in toc_files(toc()), "book/notation.md is not in _toc.yml"
    page = (BOOK / "notation.md").read_text(encoding="utf-8")
    assert unlinked_chapters(page, chapters) == [], "book/notation.md does not link these chapters"
    assert page.count("\n| ") >= 30, "the notation page should be a table of the book's symbols"


@pytest.mark.parametrize("page", ["intro.md", "notation.md"])
def test_links_to_sections_name_existing_headings(page):
    broken = broken_anchors((BOOK / page).read_text(encoding="utf-8"), notebook_anchors)
    assert broken == [], (
        f"book/{page} links to sections that do not exist (a heading was renamed?):\n  "
        + "\n  ".join(broken)
    )
