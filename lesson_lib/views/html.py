"""HTML building blocks shared by every view: escaping, the kinds' looks, CSS, the counter.

Rules the views follow (and this module makes easy):

- every piece of text from a capture goes through `esc` before it goes into
  HTML: model text is data, never markup;
- colour never carries meaning alone: each event kind has a colour from the
  palette (`palette`: Okabe-Ito hues at 3:1 on both themes) AND a glyph, a
  word and a border style (`KIND_STYLES`, `kind_badge`);
- colours for text and surfaces come from JupyterLab's CSS variables, with
  fallbacks, so the views read in light and dark themes;
- the essentials are inline (the current-row arrow is a character, not a
  stylesheet effect), so a static copy on GitHub still says what it means.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from .palette import NEUTRAL, OKABE_ITO


@dataclass(frozen=True)
class KindStyle:
    """How one kind of event looks everywhere: glyph, colour, border, plot marker."""

    glyph: str      # a shape a reader can tell apart without colour
    colour: str     # a colour of the palette
    border: str     # a CSS border style, a second non-colour cue
    marker: str     # the matplotlib marker with the same shape as the glyph


KIND_STYLES: dict[str, KindStyle] = {
    "start/stop": KindStyle("■", OKABE_ITO["blue"], "solid", "s"),
    "text delta": KindStyle("●", OKABE_ITO["bluish green"], "solid", "o"),
    "tool-args delta": KindStyle("▲", OKABE_ITO["orange"], "dashed", "^"),
    "reasoning delta": KindStyle("▼", OKABE_ITO["reddish purple"], "dotted", "v"),
    "ping": KindStyle("◆", OKABE_ITO["sky blue"], "dotted", "D"),
    "error": KindStyle("✖", OKABE_ITO["vermillion"], "double", "X"),
    "other": KindStyle("✚", NEUTRAL, "solid", "P"),
}

FG = "var(--jp-ui-font-color1, #1a1a1a)"
FG_MUTED = "var(--jp-ui-font-color2, #555555)"
BG = "var(--jp-layout-color1, #ffffff)"
BG_ALT = "var(--jp-layout-color2, #eeeeee)"
BORDER = "var(--jp-border-color1, #bdbdbd)"
MONO = "var(--jp-code-font-family, ui-monospace, SFMono-Regular, Menlo, Consolas, monospace)"


def esc(text: object) -> str:
    """Escape anything for HTML text and attribute values (quotes included)."""
    return html.escape("" if text is None else str(text), quote=True)


def kind_badge(kind: str) -> str:
    """A small label for an event kind: glyph + word, coloured border (never colour alone)."""
    style = KIND_STYLES.get(kind, KIND_STYLES["other"])
    return (f'<span class="rtw-kind" data-kind="{esc(kind)}" '
            f'style="border:2px {style.border} {style.colour};padding:0 3px;'
            f'border-radius:3px;white-space:nowrap">'
            f'<span aria-hidden="true" style="color:{style.colour}">{style.glyph}</span> '
            f'{esc(kind)}</span>')


def counter_html(text: str) -> str:
    """The player's counter: announced by screen readers (a polite live region)."""
    return (f'<div class="rtw-counter-text" role="status" aria-live="polite" aria-atomic="true" '
            f'style="font-family:{MONO};color:{FG};white-space:pre-wrap;overflow-wrap:anywhere">'
            f'{esc(text)}</div>')


def section(name: str, body: str, css_class: str = "") -> str:
    """A titled region for one pane (a landmark a screen reader can jump to)."""
    slug = "".join(ch if ch.isalnum() else "-" for ch in name.lower()).strip("-")
    classes = " ".join(c for c in ("rtw-pane", f"rtw-pane-{slug}", css_class) if c)
    return (f'<section class="{classes}" aria-label="{esc(name)}">'
            f'<div class="rtw-pane-title" style="font-weight:bold;color:{FG_MUTED};'
            f'margin:4px 0">{esc(name)}</div>{body}</section>')


STYLE = f"""<style>
.rtw-table {{ border-collapse: collapse; font-family: {MONO}; font-size: 12px; color: {FG}; }}
.rtw-table th, .rtw-table td {{ padding: 1px 6px; text-align: left; white-space: pre;
  border-bottom: 1px solid {BORDER}; }}
.rtw-table th {{ color: {FG_MUTED}; }}
.rtw-table tr.rtw-current-row td {{ font-weight: bold; background: {BG_ALT};
  border-top: 2px solid {FG}; border-bottom: 2px solid {FG}; }}
.rtw-raw {{ font-family: {MONO}; font-size: 12px; color: {FG}; background: {BG_ALT};
  padding: 6px; margin: 0; white-space: pre-wrap; word-break: break-all; }}
.rtw-eol {{ color: {FG_MUTED}; }}
.rtw-pad {{ border-bottom: 2px dotted {FG_MUTED}; }}
.rtw-chunk-break {{ color: {OKABE_ITO["vermillion"]}; font-weight: bold; }}
.rtw-note {{ color: {FG_MUTED}; font-size: 12px; }}
.rtw-counter-text {{ padding: 4px 8px; }}
.rtw-player {{ background: {BG}; }}
</style>"""


def page(body: str) -> str:
    """A self-contained HTML fragment: the shared stylesheet, then `body`."""
    return f'<div class="rtw">{STYLE}{body}</div>'
