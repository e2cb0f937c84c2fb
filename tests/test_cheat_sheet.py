"""The cheat sheet is rendered from the wire facts and the committed pages are in step."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from lesson_lib import wires
from lesson_lib.course import cheat_sheet

ROOT = Path(__file__).resolve().parent.parent


def test_the_committed_pages_are_what_the_wire_facts_render():
    # The coverage table follows the wire table (`tests/test_coverage.py` checks it).
    assert (ROOT / "CHEATSHEET.md").read_text(encoding="utf-8").startswith(
        cheat_sheet.markdown() + "\n## "), "run `make cheat-sheet`"
    assert (ROOT / "cheatsheet.html").read_text(encoding="utf-8") == cheat_sheet.html()


def test_every_wire_and_every_fact_is_on_the_page():
    text = cheat_sheet.markdown()
    for module in wires.WIRES.values():
        sheet = module.SHEET
        assert f"**{sheet.wire}**" in text
        for name, _ in sheet.events + sheet.addressing:
            assert f"`{name}`" in text, (sheet.wire, name)
        assert sheet.terminal.replace("|", "\\|") in text
    rows = [line for line in text.splitlines() if line.startswith("| **")]
    assert len(rows) == len(cheat_sheet.ROWS)
    assert all(row.count(" | ") == len(wires.WIRES) for row in rows)


class Cells(HTMLParser):
    def __init__(self):
        super().__init__()
        self.open, self.cells = [], 0

    def handle_starttag(self, tag, attrs):
        if tag not in ("br", "meta"):
            self.open.append(tag)
        self.cells += tag == "td"

    def handle_endtag(self, tag):
        assert self.open and self.open.pop() == tag, tag


def test_the_html_page_is_well_formed_and_escaped():
    page = cheat_sheet.html()
    parser = Cells()
    parser.feed(page.removeprefix("<!DOCTYPE html>\n"))
    assert parser.open == [] and parser.cells == len(cheat_sheet.ROWS) * 3
    assert "@page { size: landscape" in page


def test_every_wire_is_on_one_printed_page():
    pages = cheat_sheet.pages()
    assert sorted(w for page in pages for w in page) == sorted(wires.WIRES)
    assert all(1 <= len(page) <= 3 for page in pages)
    for number, names in enumerate(pages[1:], 2):
        assert (ROOT / f"cheatsheet-{number}.html").read_text(encoding="utf-8") == \
            cheat_sheet.html(names)


def test_no_cell_is_empty_on_any_wire():
    for module in wires.WIRES.values():
        sheet = module.SHEET
        for _, field in cheat_sheet.ROWS:
            # (the turn's ends come from the mapping the turn uses, not the sheet)
            assert cheat_sheet.fact(sheet, field), f"{sheet.wire}: no {field} on its sheet"
    rows = [line for line in cheat_sheet.markdown().splitlines() if line.startswith("| **")]
    for row in rows:
        assert "|  |" not in row and not row.endswith("|  |"), row


def test_each_printed_page_has_a_title_of_its_own():
    titles = [cheat_sheet.page_title(names) for names in cheat_sheet.pages()]
    assert len(set(titles)) == len(titles)
    for names, title in zip(cheat_sheet.pages(), titles, strict=True):
        assert all(name in title for name in names)
        assert f"<title>{title}</title>" in cheat_sheet.html(names)
    assert "three" not in cheat_sheet.TITLE


def test_the_readme_table_of_wires_is_what_the_registry_renders():
    from lesson_lib.course import wire_table

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert wire_table.markdown() in readme, "run `make cheat-sheet`"
    for entry in wires.ENTRIES.values():
        assert f"`{entry.method} {entry.route}`" in wire_table.markdown()


def test_every_page_names_every_wire_and_none_says_three():
    import nbformat

    lesson_0 = nbformat.read(ROOT / "notebooks" / "00-start-here.ipynb", 4).cells[0].source
    pages = {name: (ROOT / name).read_text(encoding="utf-8")
             for name in ("README.md", "INSTRUCTORS.md", "CHEATSHEET.md")}
    pages["lesson 0's first cell"] = lesson_0
    for name, text in pages.items():
        flat = " ".join(text.split())
        assert "three wires" not in flat and "3 wires" not in flat, name
        for entry in wires.ENTRIES.values():
            assert entry.title in flat or entry.wire in flat, (name, entry.title)
