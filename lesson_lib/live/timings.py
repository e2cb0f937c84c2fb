"""What the live turn measured, read from its events' arrival times.

Time to first byte, first text and first tool start; the gaps between deltas;
and per step, how much earlier the next model call could start because tools
started when their calls became ready instead of when the stream ended.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Timings:
    """One step's clock: each figure in ms from the moment its request was sent."""

    step: int
    first_byte: float | None = None
    first_text: float | None = None
    first_tool_start: float | None = None
    stream_end: float | None = None
    tools_done: float | None = None
    gaps: list[float] = field(default_factory=list)
    tool_durations: list[float] = field(default_factory=list)

    @property
    def next_call_gain(self) -> float | None:
        """How much earlier (ms) the next model call could start than if every tool had
        waited for the stream's end: the last tool to finish decides both."""
        if self.stream_end is None or self.tools_done is None or not self.tool_durations:
            return None
        waited = self.stream_end + max(self.tool_durations)
        return max(0.0, waited - max(self.tools_done, self.stream_end))

    def line(self) -> str:
        """The step's figures on one line."""
        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v:.0f} ms"
        gap = f"{max(self.gaps):.0f} ms" if self.gaps else "-"
        gain = self.next_call_gain
        return (f"step {self.step}: first byte {ms(self.first_byte)}, first text "
                f"{ms(self.first_text)}, first tool {ms(self.first_tool_start)}, end "
                f"{ms(self.stream_end)}, longest gap {gap}, next call earlier by "
                f"{'-' if gain is None else f'{gain:.0f} ms'}")


def timings_of(events: list, step: int, origin: float = 0.0,
               first_byte: float | None = None) -> Timings:
    """A step's `Timings` from its turn events, whose `t` is ms on the turn's clock;
    `origin` is when the step's request was sent on that clock."""
    out = Timings(step, first_byte=first_byte)
    last_delta = None
    started: dict[str, float] = {}
    for e in events:
        if e.t is None:
            continue
        e = _shifted(e, origin)
        if e.kind == "block_delta":
            if out.first_text is None and e.channel == "text":
                out.first_text = e.t
            if last_delta is not None:
                out.gaps.append(e.t - last_delta)
            last_delta = e.t
        elif e.kind == "tool_execution_started":
            started[e.block] = e.t
            if out.first_tool_start is None:
                out.first_tool_start = e.t
        elif e.kind == "tool_execution_finished" and e.block in started:
            out.tool_durations.append(e.t - started[e.block])
            out.tools_done = max(out.tools_done or 0.0, e.t)
        elif e.kind == "step_finished":
            out.stream_end = e.t
    return out


def _shifted(event, origin: float):
    from dataclasses import replace
    return replace(event, t=event.t - origin)
