"""The marker colours: 3:1 against both themes' backgrounds (WCAG 2.1, 1.4.11 non-text
contrast), Okabe-Ito hues kept, and no two colours alike for colour-blind readers."""

from __future__ import annotations

import itertools
import math
import re
import sys
from pathlib import Path

import pytest

from lesson_lib.views import html, slot_view, tool_card, turn_timeline, turn_view
from lesson_lib.views.palette import (
    NEUTRAL,
    NON_TEXT_CONTRAST,
    OKABE_ITO,
    THEME_BACKGROUNDS,
    contrast_ratio,
    relative_luminance,
)

# Okabe & Ito (2008), the published palette the hues come from.
PUBLISHED = {"orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73",
             "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00",
             "reddish purple": "#CC79A7"}
HEX = re.compile(r"#[0-9A-Fa-f]{6}")


def marker_colours() -> dict[str, str]:
    """Every colour a view draws a marker, border or glyph with, by where it is used."""
    found = {f"palette {k}": v for k, v in OKABE_ITO.items()} | {"palette neutral": NEUTRAL}
    found |= {f"event kind {k}": s.colour for k, s in html.KIND_STYLES.items()}
    found |= {f"slot {k}": s.colour for k, s in slot_view.FAMILY_STYLES.items()}
    found |= {f"tool card {k}": s.colour for k, s in tool_card.STATE_STYLES.items()}
    found |= {f"tool run {k}": s[0] for k, s in turn_timeline.RUN_STYLES.items()}
    for table in ("TOOL_STATES", "BLOCK_STATES", "OUTCOMES"):
        for k, look in getattr(turn_view, table).items():
            # ``var(--rtw-name, #hex)``: the fallback is what a page without a theme shows.
            found[f"turn {table} {k}"] = HEX.search(look.colour).group(0)
    return found


# -- the ratio itself ----------------------------------------------------------------------


def test_the_contrast_ratio_is_wcag_s():
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#777777") == pytest.approx(1.0)
    assert contrast_ratio("#ffffff", "#767676") == contrast_ratio("#767676", "#ffffff")
    # #767676 is the lightest grey that reaches 4.5:1 on white, as WCAG checkers say.
    assert round(contrast_ratio("#767676", "#ffffff"), 2) == 4.54
    assert contrast_ratio("#777777", "#ffffff") < 4.5
    assert relative_luminance("#ffffff") == pytest.approx(1.0)
    assert relative_luminance("#000000") == 0.0


def test_the_theme_backgrounds_are_jupyterlab_s():
    assert f"{THEME_BACKGROUNDS['light']})" in html.BG       # the fallback of --jp-layout-color1
    themes = Path(sys.prefix) / "share/jupyter/lab/themes/@jupyterlab"
    dark = themes / "theme-dark-extension/index.css"
    if not dark.exists():
        pytest.skip(f"JupyterLab's dark theme is not installed at {dark}")
    css = dark.read_text(encoding="utf-8")
    layout = re.search(r"--jp-layout-color1:\s*var\(--md-grey-900,\s*(#[0-9a-fA-F]+)\)", css)
    assert layout and layout.group(1).lower() == THEME_BACKGROUNDS["dark"]


# -- every marker colour ---------------------------------------------------------------------


def test_every_view_draws_its_markers_from_the_palette():
    allowed = set(OKABE_ITO.values()) | {NEUTRAL}
    strays = {where: c for where, c in marker_colours().items() if c not in allowed}
    assert strays == {}


@pytest.mark.parametrize("theme", sorted(THEME_BACKGROUNDS))
def test_every_marker_colour_reaches_3_to_1_on_both_themes(theme):
    background = THEME_BACKGROUNDS[theme]
    low = {where: round(contrast_ratio(c, background), 2)
           for where, c in marker_colours().items()
           if contrast_ratio(c, background) < NON_TEXT_CONTRAST}
    assert low == {}, f"below {NON_TEXT_CONTRAST}:1 on the {theme} theme ({background})"


# -- still Okabe-Ito, still told apart --------------------------------------------------------


def _linear(colour: str) -> list[float]:
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    return [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]


def _oklab(rgb: list[float]) -> tuple[float, float, float]:
    """Björn Ottosson's OKLab of linear sRGB."""
    r, g, b = rgb
    lms = (0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b,
           0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b,
           0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b)
    l_, m_, s_ = (math.copysign(abs(v) ** (1 / 3), v) for v in lms)
    return (0.2104542553 * l_ + 0.7936177850 * m_ - 0.0040720468 * s_,
            1.9779984951 * l_ - 2.4285922050 * m_ + 0.4505937099 * s_,
            0.0259040371 * l_ + 0.7827717662 * m_ - 0.8086757660 * s_)


def _hue(colour: str) -> float:
    _, a, b = _oklab(_linear(colour))
    return math.degrees(math.atan2(b, a)) % 360


# Machado, Oliveira & Fernandes (2009), full-severity simulations, on linear sRGB.
DEFICIENCIES = {
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216),
                   (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602),
                   (0.004733, 0.691367, 0.303900)),
    "typical vision": ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
}
# OKLab distance: about 0.02 is just noticeable; two markers must be at least twice that.
APART = 0.04


def _seen(colour: str, matrix) -> tuple[float, float, float]:
    rgb = _linear(colour)
    return _oklab([min(1.0, max(0.0, sum(w * v for w, v in zip(row, rgb, strict=True))))
                   for row in matrix])


def test_each_colour_keeps_its_okabe_ito_hue():
    assert set(OKABE_ITO) == set(PUBLISHED)
    turned = {name: round(abs((_hue(OKABE_ITO[name]) - _hue(PUBLISHED[name]) + 180) % 360
                              - 180), 1) for name in PUBLISHED}
    assert all(degrees <= 3 for degrees in turned.values()), turned


@pytest.mark.parametrize("deficiency", sorted(DEFICIENCIES))
def test_no_two_marker_colours_look_alike(deficiency):
    matrix = DEFICIENCIES[deficiency]
    colours = {**OKABE_ITO, "neutral": NEUTRAL}
    close = {(a, b): round(math.dist(_seen(colours[a], matrix), _seen(colours[b], matrix)), 3)
             for a, b in itertools.combinations(colours, 2)}
    assert min(close.values()) >= APART, sorted(close.items(), key=lambda kv: kv[1])[:3]


def test_the_published_palette_would_fail_on_white():
    # The reason the lightness moved: the check above is not one any palette passes.
    white = THEME_BACKGROUNDS["light"]
    assert {n for n, c in PUBLISHED.items() if contrast_ratio(c, white) < NON_TEXT_CONTRAST} \
        == {"orange", "sky blue", "yellow"}
