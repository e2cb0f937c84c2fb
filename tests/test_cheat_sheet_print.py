"""The printed cheat sheet: `cheatsheet.html` rendered to PDF by Chromium is one landscape
page on A4 and on Letter, and no cell's text runs into the next column.

Skipped (with the reason) when Chromium is not installed; ``.ci/run`` installs Debian's
``chromium``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed "
                       "(Debian package `chromium`; .ci/run installs it)"),
]

# Every cell whose content is wider than the cell (text running into the next column).
OVERFLOWING = """() => [...document.querySelectorAll('td, th')]
    .filter((cell) => cell.scrollWidth > cell.clientWidth + 1)
    .map((cell) => cell.textContent.slice(0, 60))"""


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


SHEETS = sorted(p.name for p in ROOT.glob("cheatsheet*.html"))


@pytest.fixture(scope="module", params=SHEETS)
def tab(browser, request):
    page = browser.new_page()
    page.goto((ROOT / request.param).as_uri())
    yield page
    page.close()


def pages_in(pdf: bytes) -> int:
    """The number of pages of a PDF (its page objects, not the page tree)."""
    return len(re.findall(rb"/Type\s*/Page(?!s)", pdf))


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_the_cheat_sheet_prints_on_one_landscape_page(tab, paper):
    pdf = tab.pdf(format=paper, landscape=True, print_background=True)
    assert pdf.startswith(b"%PDF") and pages_in(pdf) == 1


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_no_cell_runs_into_the_next_column_in_print(tab, paper):
    width = {"A4": "297mm", "Letter": "11in"}[paper]
    tab.emulate_media(media="print")
    tab.set_viewport_size({"width": 1100 if paper == "A4" else 1056, "height": 800})
    tab.evaluate(f"() => {{ document.body.style.width = 'calc({width} - 16mm)'; }}")
    try:
        assert tab.evaluate(OVERFLOWING) == []
    finally:
        tab.evaluate("() => { document.body.style.width = ''; }")
        tab.emulate_media(media="screen")


def test_a_two_page_document_counts_two(browser):
    page = browser.new_page()
    try:
        page.set_content("<p>one</p><p style='break-before: page'>two</p>")
        assert pages_in(page.pdf(format="A4", landscape=True)) == 2
    finally:
        page.close()
