"""Every character the views draw is in a font a Debian JupyterLab has (DejaVu, which
Chromium falls back to), so none shows as an empty box (the old pause sign U+23F8 did)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

VIEWS = Path(__file__).resolve().parent.parent / "lesson_lib" / "views"
FC_LIST = shutil.which("fc-list")


def covering_families(ch: str) -> str:
    return subprocess.run([FC_LIST, f":charset={ord(ch):x}", "family"], capture_output=True,
                          text=True, check=True, timeout=30).stdout


def dejavu_installed() -> bool:
    return FC_LIST is not None and "DejaVu Sans" in covering_families("A")


@pytest.mark.skipif(not dejavu_installed(),
                    reason="fontconfig or the DejaVu fonts are missing (Debian: fonts-dejavu-core)")
def test_every_glyph_the_views_use_is_in_dejavu():
    glyphs = sorted({ch for path in VIEWS.glob("*.py")
                     for ch in path.read_text(encoding="utf-8") if ord(ch) > 127})
    assert "‖" in glyphs and "\u23f8" not in glyphs
    missing = [f"{ch} U+{ord(ch):04X}" for ch in glyphs
               if "DejaVu" not in covering_families(ch)]
    assert not missing, f"no DejaVu font draws {missing}"
