"""Write CHEATSHEET.md, cheatsheet.html and cheatsheet-2.html (one printed page each) from the wire facts (`lesson_lib.course.cheat_sheet`).

    python scripts/build_cheat_sheet.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from lesson_lib.course import cheat_sheet

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    (ROOT / "CHEATSHEET.md").write_text(cheat_sheet.markdown(), encoding="utf-8")
    for number, names in enumerate(cheat_sheet.pages(), 1):
        name = "cheatsheet.html" if number == 1 else f"cheatsheet-{number}.html"
        (ROOT / name).write_text(cheat_sheet.html(names), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
