"""The views' marker colours, and the contrast rule they are held to.

A marker colour is never text: it fills a plot marker, draws a badge's or a
card's border, colours a glyph that also has a word beside it. WCAG 2.1's
success criterion 1.4.11 (non-text contrast) asks such a mark for 3:1
against what is behind it, and the views are read on JupyterLab's light
theme (white) and its dark theme (``#212121``), so every colour here reaches
3:1 on both: its relative luminance sits between about 0.15 and 0.30.

The hues are Okabe & Ito's (2008, "Color Universal Design"), chosen to stay
apart for the common colour-vision deficiencies. Their lightness is moved
into that band (in OKLab, keeping each hue, and as much of its chroma as
sRGB allows): the original orange, sky blue and yellow are too light for a
white page, and a darker mark on a dark page must not go below 3:1 either.
Within the band the lightnesses are spread (bluish green and vermillion low,
blue and orange in the middle, sky blue, yellow and reddish purple high) so
that no two colours come close under simulated protanopia, deuteranopia or
tritanopia (a test measures it). Colour is never the only cue anyway: every
state also has a glyph, a word and a border style.
"""

from __future__ import annotations

# Okabe-Ito hues, lightness adjusted for 3:1 on both themes (the original in comments).
OKABE_ITO = {
    "orange": "#AB7502",           # #E69F00
    "sky blue": "#399ACE",         # #56B4E9
    "bluish green": "#017E5B",     # #009E73
    "yellow": "#9D9403",           # #F0E442, now an olive: the only way to 3:1 on white
    "blue": "#197DBD",             # #0072B2
    "vermillion": "#B64F00",       # #D55E00
    "reddish purple": "#CA77A5",   # #CC79A7
}
NEUTRAL = "#808080"   # "anything else": a grey, at 3:1 on both themes too

# The page behind the views: JupyterLab's ``--jp-layout-color1`` in each theme.
THEME_BACKGROUNDS = {"light": "#ffffff", "dark": "#212121"}
NON_TEXT_CONTRAST = 3.0   # WCAG 2.1, 1.4.11


def relative_luminance(colour: str) -> float:
    """WCAG 2's relative luminance of an sRGB colour written ``#rrggbb`` (0 black, 1 white)."""
    digits = colour.lstrip("#")
    channels = [int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two ``#rrggbb`` colours, from 1 (the same) to 21."""
    light, dark = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)
