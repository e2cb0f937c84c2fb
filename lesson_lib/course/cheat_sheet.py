"""Every registered wire side by side, rendered from `lesson_lib.wires`' sheets.

`markdown()` and `html()` are pure: they read each wire's ``SHEET`` and
return text; ``scripts/build_cheat_sheet.py`` (``make cheat-sheet``, also run
by ``make notebooks``) writes ``CHEATSHEET.md`` and ``cheatsheet.html``, and a
test keeps the committed files equal to what the wire facts render.
"""

from __future__ import annotations

import html as _html
import re

from .. import wires
from ..turn.events import Finish, StepFinished
from ..turn.outcome import end_of_turn

TITLE = "Reading the Wire: every wire side by side"
ROWS = (("Events, in order", "events"), ("Addressing", "addressing"),
        ("Tool arguments arrive", "tool_arguments"),
        ("Reasoning, refusals, citations", "also"), ("Ends properly with", "terminal"),
        ("Why it stopped", "finish"), ("How the turn ends, if not completed", "turn_ends"),
        ("In-band error (after HTTP 200)", "in_band_error"),
        ("Failed request (before any event)", "error_body"))


# A fact a wire does not have is said, never left as an empty cell.
NONE_ON_THIS_WIRE = "none on this wire"


def _cells(value, code, join: str) -> str:
    if isinstance(value, str):
        return value or NONE_ON_THIS_WIRE
    return join.join(f"{code(name)}: {what}" for name, what in value) or NONE_ON_THIS_WIRE


def turn_ends(wire: str) -> str:
    """The ends of a turn on `wire` other than ``completed``, as ``outcome · reason`` (the
    vocabulary of `lesson_lib.turn.ends`), read from the wire's own tables through the one
    mapping the turn uses (`turn.outcome.end_of_turn`): each raw value that ends it so, then
    what every wire shares (a cut, an error, a value the reader does not know)."""
    module = wires.WIRES[wire]
    raws = dict(getattr(module, "FINISH_REASONS", {}))
    for raw in getattr(module, "TURN_ENDS", {}):
        raws.setdefault(raw, "other")
    grouped: dict[str, list[str]] = {}
    for raw, reason in raws.items():
        end = end_of_turn(StepFinished(0, step=1, ended="proper", finish=Finish(reason, raw)),
                          wire)
        if end.outcome != "completed":
            grouped.setdefault(f"{end.outcome} · {end.reason}", []).append(f"`{raw}`")
    said = [f"{', '.join(raws)} → {end}" for end, raws in grouped.items()]
    return "; ".join(said + ["a value not listed → unknown · unrecognised (raw kept); "
                             "no terminal → truncated · cut; an error → failed · error"])


def fact(sheet: wires.Sheet, field: str):
    """One cell's fact: the wire's sheet says it, or (the turn's ends) the mapping does."""
    return turn_ends(sheet.wire) if field == "turn_ends" else getattr(sheet, field)


def markdown() -> str:
    """The cheat sheet as a Markdown table: one column per wire, one row per question."""
    sheets = [module.SHEET for module in wires.WIRES.values()]
    lines = [f"# {TITLE}", "",
             "Generated from `lesson_lib.wires` (`make cheat-sheet`); do not edit by hand. "
             "A printable version is `cheatsheet.html`.", "",
             "| | " + " | ".join(f"**{s.wire}**" for s in sheets) + " |",
             "|---|" + "---|" * len(sheets)]
    for label, field in ROWS:
        cells = [_cells(fact(s, field), lambda n: f"`{n}`", "<br>").replace("|", "\\|")
                 for s in sheets]
        lines.append(f"| **{label}** | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _html_cell(value) -> str:
    def esc(text: str) -> str:          # `name` in the wire facts' prose is code too
        return re.sub(r"`([^`<>]+)`", r"<code>\1</code>", _html.escape(text))
    if isinstance(value, str):
        return esc(value or NONE_ON_THIS_WIRE)
    return ("<br>".join(f"<code>{_html.escape(name)}</code>: {esc(what)}" for name, what in value)
            or NONE_ON_THIS_WIRE)


# The printed sheets: each fits one landscape page, so the wires go three to a page, and a
# session stream's long column shares its page with one other at most.
FIRST_PAGE = (wires.anthropic.WIRE, wires.responses.WIRE, wires.chat.WIRE)
PER_PAGE, PER_PAGE_WITH_A_SESSION = 3, 2


def pages() -> list[tuple[str, ...]]:
    """The wires of each printed page: the course's first three, then the others in order,
    three to a page (two where one of them is a session stream, a GET)."""
    out: list[tuple[str, ...]] = [FIRST_PAGE]
    page: list[str] = []
    for name in (n for n in wires.WIRES if n not in FIRST_PAGE):
        room = PER_PAGE_WITH_A_SESSION if any(
            wires.ENTRIES[n].method == "GET" for n in (*page, name)) else PER_PAGE
        if page and len(page) >= room:
            out.append(tuple(page))
            page = []
        page.append(name)
    return out + ([tuple(page)] if page else [])


def page_title(names: tuple[str, ...]) -> str:
    """The title of the printed page that holds the wires `names`: which page of how many,
    and its wires."""
    all_pages = pages()
    number = all_pages.index(tuple(names)) + 1 if tuple(names) in all_pages else 1
    return f"Reading the Wire, page {number} of {len(all_pages)}: {', '.join(names)}"


def html(names: tuple[str, ...] = FIRST_PAGE) -> str:
    """The cheat sheet of the wires `names` as a self-contained HTML page that prints on
    one landscape sheet."""
    esc = _html.escape
    sheets = [wires.WIRES[name].SHEET for name in names]
    title = page_title(names)
    head = "".join(f"<th>{esc(s.wire)}</th>" for s in sheets)
    body = []
    for label, field in ROWS:
        cells = "".join(f"<td>{_html_cell(fact(s, field))}</td>" for s in sheets)
        body.append(f"<tr><th scope=\"row\">{esc(label)}</th>{cells}</tr>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title><style>\n"
            # Landscape on whatever paper the printer has: one page of A4 or of Letter.
            "@page { size: landscape; margin: 8mm; }\n"
            "body { font: 7pt/1.2 system-ui, sans-serif; color: #111; background: #fff; "
            "margin: 0; }\n"
            "table { border-collapse: collapse; width: 100%; table-layout: fixed; }\n"
            "th, td { border: 1px solid #888; padding: 2px 4px; vertical-align: top; "
            "text-align: left; overflow-wrap: anywhere; }\n"
            "thead th { background: #e8e8e8; } tbody th { width: 9em; background: #f4f4f4; }\n"
            "code { font: 6.5pt ui-monospace, monospace; overflow-wrap: anywhere; }\n"
            "</style></head><body>\n"
            f"<h1 style=\"font-size:11pt;margin:0 0 4px\">{esc(title)}</h1>\n"
            f"<table><thead><tr><th></th>{head}</tr></thead><tbody>\n"
            + "\n".join(body) + "\n</tbody></table>\n"
            "<p style=\"font-size:6.5pt;margin:2px 0 0\">Generated from lesson_lib.wires."
            "</p>\n</body></html>\n")
