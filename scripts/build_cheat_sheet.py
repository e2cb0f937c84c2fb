"""Write CHEATSHEET.md, cheatsheet.html and cheatsheet-2.html (one printed page each) from the wire facts (`lesson_lib.course.cheat_sheet`), README.md's table of wires from the registry (`lesson_lib.course.wire_table`), and README.md's and INSTRUCTORS.md's list of the server's paths and INSTRUCTORS.md's recipes for pointing each SDK at it (`lesson_lib.course.recipes`).

CHEATSHEET.md ends with the coverage table (`lesson_lib.course.coverage`): which of the
installed SDKs' stream types the corpus shows. It reads the shared reference captures
too; where they are absent the committed table is kept, with a note.

    python scripts/build_cheat_sheet.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from lesson_lib.capture import captures
from lesson_lib.course import cheat_sheet, coverage, recipes, wire_table

ROOT = Path(__file__).resolve().parent.parent


def coverage_table(committed: str) -> str:
    """The coverage section: rendered from the corpus, or the committed one when the
    reference captures are absent (a table without them would undercount)."""
    reference = captures.reference_corpus()
    if not reference:
        print(f"reference captures not found at {captures.reference_dir()}: the coverage "
              "table in CHEATSHEET.md is left as it was", file=sys.stderr)
        return committed
    return coverage.markdown(coverage.rows(coverage.sdk_types(),
                                           coverage.sightings(captures.corpus(), reference)))


def main() -> int:
    path = ROOT / "CHEATSHEET.md"
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    committed = old.partition(coverage.HEADING)[1] + old.partition(coverage.HEADING)[2]
    path.write_text(cheat_sheet.markdown() + "\n" + coverage_table(committed),
                    encoding="utf-8")
    for number, names in enumerate(cheat_sheet.pages(), 1):
        name = "cheatsheet.html" if number == 1 else f"cheatsheet-{number}.html"
        (ROOT / name).write_text(cheat_sheet.html(names), encoding="utf-8")
    readme = ROOT / "README.md"
    readme.write_text(recipes.replace_in(wire_table.replace_in(readme.read_text(encoding="utf-8"))),
                      encoding="utf-8")
    guide = ROOT / "INSTRUCTORS.md"
    guide.write_text(recipes.replace_in(guide.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
