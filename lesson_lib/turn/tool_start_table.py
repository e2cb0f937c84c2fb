"""Both tool-start rules measured on captures: the table of lesson 7 and of the note.

For each call the application runs (`lesson_lib.turn.tool_start`): when the course's
rule (``settled``: its arguments settled) and the anthropic SDK's eager rule
(``moved_on``: the model moved on from it) start it, in ms on the capture's clock and as
the wire event that started it (``@e12``), and, per rule, what the rest of the stream
says against the input it ran on. Per turn: how long before the step's end each rule
had started the last of its calls (a call a rule does not start eagerly starts at the
end), summed over the steps: the time each wins over waiting for the end.

``scripts/tool_start_table.py`` prints it over the corpus and the reference recordings.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..capture.captures import Capture
from .adapters import ADAPTERS
from .events import ToolCallInvalid, ToolCallReady, TurnEvent
from .run import turn_events
from .tool_start import RULES, ToolStart, arrivals, tool_starts


@dataclass(frozen=True)
class CallRow:
    """One call of one capture: its start under each rule (None: not started while the
    reply streamed) and its step's end."""

    capture: str
    step: int
    block: str
    name: str | None
    runs_at_end: bool        # its input parsed and its step ended asking for tools
    starts: dict[str, ToolStart | None]
    end_t: float | None
    end_at: int | None


@dataclass(frozen=True)
class TurnRow:
    """One capture's turn: per rule, the ms by which it started the last call of each
    step before the step's end, summed (None without timings), and its contradictions."""

    capture: str
    calls: int
    lead: dict[str, float | None]
    contradicted: dict[str, int]


def client_calls(events: list[TurnEvent]) -> list[ToolCallReady | ToolCallInvalid]:
    """The calls the application would run (not the provider's own)."""
    return [e for e in events if isinstance(e, ToolCallReady | ToolCallInvalid)
            and not getattr(e, "server_side", False)]


def measure(capture: Capture) -> tuple[list[CallRow], TurnRow] | None:
    """The rows of one capture, or None when it has no call the application runs."""
    events = turn_events(capture)
    calls = client_calls(events)
    if not calls:
        return None
    by_rule = {rule: {s.block: s for s in tool_starts(events, rule)} for rule in RULES}
    when = arrivals(events)
    ends = {e.step: when[i] for i, e in enumerate(events) if e.kind == "step_finished"}
    asks = {e.step for e in events if e.kind == "step_finished" and e.ended == "proper"
            and e.finish.reason == "tool_calls"}
    step_of = {e.block: e.step for e in events if e.kind == "block_started"}
    rows = []
    for call in calls:
        step = step_of.get(call.block, 0)
        end_t, end_at = ends.get(step, (None, None))
        rows.append(CallRow(capture.key, step, call.block, call.name,
                            isinstance(call, ToolCallReady) and step in asks,
                            {rule: by_rule[rule].get(call.block) for rule in RULES},
                            end_t, end_at))
    return rows, TurnRow(capture.key, len(calls),
                         {rule: _lead(rows, rule) for rule in RULES},
                         {rule: sum(1 for s in by_rule[rule].values() if s.contradicted)
                          for rule in RULES})


def _lead(rows: list[CallRow], rule: str) -> float | None:
    """Summed over steps: the step's end minus when `rule` had started its last call (of
    the calls that run, started early or at the end)."""
    steps = sorted({r.step for r in rows if r.runs_at_end})
    if not steps:
        return None                          # no call runs: nothing to win
    total = 0.0
    for step in steps:
        mine = [r for r in rows if r.step == step and r.runs_at_end]
        end = mine[0].end_t
        if end is None:
            return None
        started = [r.starts[rule].t if r.starts[rule] is not None else end for r in mine]
        if any(t is None for t in started):
            return None
        total += end - max(started)
    return total


def _when(start: ToolStart | None, runs_at_end: bool) -> str:
    if start is None:
        return "at the end" if runs_at_end else "never"
    return _at(start.t, start.at)


def _at(t: float | None, at: int | None) -> str:
    return " ".join(x for x in ("" if t is None else f"{t:.0f} ms",
                                "" if at is None else f"@e{at}") if x) or "-"


def _against(row: CallRow) -> str:
    said = [f"{rule}: {s.contradicted}" for rule, s in row.starts.items()
            if s is not None and s.contradicted]
    return "; ".join(said) or "-"


def table(captures: list[Capture]) -> tuple[list[CallRow], list[TurnRow], list[str]]:
    """Every capture's call rows and turn rows, and the captures no adapter reads yet."""
    calls, turns, unread = [], [], []
    for capture in captures:
        if capture.wire not in ADAPTERS:
            unread.append(capture.key)
            continue
        measured = measure(capture)
        if measured is not None:
            calls += measured[0]
            turns.append(measured[1])
    return calls, turns, unread


def render(calls: list[CallRow], turns: list[TurnRow]) -> str:
    """The two tables as Markdown."""
    lines = ["| capture | call | settled | moved_on | step end | contradicted |",
             "|---|---|---|---|---|---|"]
    for r in calls:
        lines.append(f"| {r.capture} | {r.block} {r.name} | "
                     f"{_when(r.starts['settled'], r.runs_at_end)} | "
                     f"{_when(r.starts['moved_on'], r.runs_at_end)} | {_at(r.end_t, r.end_at)} | "
                     f"{_against(r)} |")
    lines += ["", "| capture | calls | settled wins | moved_on wins | contradicted (settled / "
              "moved_on) |", "|---|---|---|---|---|"]

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.0f} ms"

    for t in turns:
        lines.append(f"| {t.capture} | {t.calls} | {ms(t.lead['settled'])} | "
                     f"{ms(t.lead['moved_on'])} | {t.contradicted['settled']} / "
                     f"{t.contradicted['moved_on']} |")
    return "\n".join(lines)
