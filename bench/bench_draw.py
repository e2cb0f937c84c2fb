"""Benchmark: drawing a Markdown answer after every delta (lesson 6), at three sizes.

One text answer of `n` deltas (about 5 characters each: paragraphs with
bold, inline code and links, lists, fenced code, tables, headings), reduced
once into a turn (outside the timed region); then the drawing is made after
every delta, as a live view would: ``Drawer.draw(state.at(i))`` and the
HTML of the parts still live (what a view updates). Settled blocks are
rendered once; only the tail is rendered again.

The baseline renders the whole text so far with markdown-it-py at every
delta (the common way, quadratic). At 16k deltas that takes minutes, so it
is timed at every `SAMPLE`-th delta and multiplied by `SAMPLE` (the rows say
so: ``baseline_sampled_every``).

Then one long block alone, arriving 4 characters a delta and drawn after
each (a list, a table, a paragraph of many lines, a code fence), at
`SHAPE_SIZES` characters: the block still forming is the one part drawn
again, so these rows show whether its cost grows with its length (before the
frames of `lesson_lib.draw.frames`, a list of 10,000 characters took 127 s).

Goals: a doubling of the answer, or of one forming block, costs the drawing
at most 2.2x (2 is linear); at 16k deltas the drawing is at least 20x faster
than the baseline. Time is CPU time (`time.process_time`), best of `ROUNDS`,
collector off.

    python bench/bench_draw.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable

from markdown_it import MarkdownIt

from lesson_lib.draw import Drawer
from lesson_lib.draw.text import TextDrawer
from lesson_lib.turn import TurnState, reduce_all
from lesson_lib.turn.events import (
    BlockDelta,
    BlockEnded,
    BlockStarted,
    Finish,
    StepFinished,
    StepStarted,
    TurnFinished,
    TurnStarted,
)

SIZES = (8_000, 16_000, 32_000)
QUICK_SIZES = (1_000, 2_000, 4_000)
DELTA = 5
SAMPLE = 64
ROUNDS = 3
DOUBLING_GOAL = 2.2
SHAPE_SIZES = (10_000, 20_000, 40_000)
QUICK_SHAPE_SIZES = (2_500, 5_000, 10_000)
SHAPE_DELTA = 4

# One line of each long block (`i` counts the lines).
SHAPES: dict[str, Callable[[int], str]] = {
    "list": lambda i: f"- item {i} with **bold**, `code` and a [link](https://example.com/{i})\n",
    "table": lambda i: (("| name | value | note |\n|------|-------|------|\n" if i == 0 else "")
                        + f"| a{i} | {i} | *note {i}* |\n"),
    "paragraph": lambda i: (f"sentence {i} has **bold** and `code`, then more words"
                            + (".\n" if i % 3 == 2 else "; ")),
    "fence": lambda i: ("```python\n" if i == 0 else "") + f"x_{i} = compute({i}, 'text')\n",
}
SPEED_GOAL = 20.0

_SECTION = """## Section {i}

The **answer** to part {i} uses `code_{i}` and a [link](https://example.com/{i}), \
then *some emphasis* and more words to read.

- first point of {i}
- second point with **bold**
- third point

```python
def step_{i}(x):
    return x * {i}
```

| name | value |
|------|-------|
| a{i} | {i} |
| b{i} | {i}.5 |

"""


def markdown_deltas(n: int) -> list[str]:
    """`n` deltas of `DELTA` characters of a long Markdown answer."""
    text, i = [], 0
    while sum(map(len, text)) < n * DELTA:
        text.append(_SECTION.format(i=i))
        i += 1
    whole = "".join(text)[:n * DELTA]
    return [whole[k:k + DELTA] for k in range(0, len(whole), DELTA)]


def answer_turn(deltas: list[str]) -> tuple[TurnState, list[int]]:
    """The turn of one text block with these deltas, and the event count after each delta."""
    events = [TurnStarted(0, turn="turn"), StepStarted(1, step=1, wire="anthropic-messages"),
              BlockStarted(2, block="s1.b0", step=1, block_kind="text")]
    marks = []
    for d in deltas:
        events.append(BlockDelta(len(events), block="s1.b0", fragment=d))
        marks.append(len(events))
    events += [BlockEnded(len(events), block="s1.b0"),
               StepFinished(len(events) + 1, step=1, finish=Finish("stop"), ended="proper")]
    events.append(TurnFinished(len(events), outcome="completed"))
    return reduce_all(events), marks


def draw_every_delta(state: TurnState, marks: list[int]) -> int:
    """Draw after every delta; return the characters of live HTML a view would update."""
    drawer = Drawer()
    shown = 0
    for m in marks:
        drawing = drawer.draw(state.at(m))
        shown += sum(len(p.html) for p in drawing.live)
    return shown


def render_whole_every_delta(deltas: list[str], every: int) -> int:
    """The baseline: render the whole text so far at every `every`-th delta."""
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    text, size = "", 0
    for k, d in enumerate(deltas):
        text += d
        if k % every == 0:
            size += len(md.render(text))
    return size


def block_source(shape: str, size: int) -> str:
    """`size` characters of one long block of `shape`."""
    lines, length, i = [], 0, 0
    while length < size:
        lines.append(SHAPES[shape](i))
        length += len(lines[-1])
        i += 1
    return "".join(lines)[:size]


def draw_block_every_delta(source: str) -> int:
    """Feed `source` in `SHAPE_DELTA`-character deltas, drawing after each; return the
    characters of live HTML a view would update."""
    drawer = TextDrawer("b")
    shown = 0
    for k in range(0, len(source), SHAPE_DELTA):
        drawer.feed(source[k:k + SHAPE_DELTA])
        for _, _, live in drawer.segments():
            shown += sum(len(p.html) for p in live)
    drawer.end()
    return shown


def run_shapes(quick: bool = False) -> list[dict]:
    """Rows: one forming block of each shape at each size, with its doubling ratio."""
    rows: list[dict] = []
    for shape in SHAPES:
        prev = None
        for size in QUICK_SHAPE_SIZES if quick else SHAPE_SIZES:
            source = block_source(shape, size)
            ours = best(lambda: draw_block_every_delta(source), 1)       # noqa: B023
            row = {"case": f"forming {shape}", "deltas": -(-size // SHAPE_DELTA), "chars": size,
                   "ours_s": ours}
            if prev is not None:
                row["ours_x2"] = ours / prev
            rows.append(row)
            prev = ours
    return rows


def best(fn: Callable[[], object], rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            fn()
            times.append(time.process_time() - start)
        finally:
            gc.enable()
    return min(times)


def run(quick: bool = False) -> list[dict]:
    """Rows: the drawing's time at each size, its doubling ratio, and the baseline at the
    middle size."""
    sizes = QUICK_SIZES if quick else SIZES
    rows: list[dict] = []
    prev = None
    for n in sizes:
        deltas = markdown_deltas(n)
        state, marks = answer_turn(deltas)
        ours = best(lambda: draw_every_delta(state, marks))       # noqa: B023
        row = {"case": "markdown answer", "deltas": n, "chars": sum(map(len, deltas)),
               "ours_s": ours}
        if prev is not None:
            row["ours_x2"] = ours / prev
        if n == sizes[1]:
            every = SAMPLE if not quick else 8
            base = best(lambda: render_whole_every_delta(deltas, every), 1) * every  # noqa: B023
            row |= {"baseline_s": base, "baseline_sampled_every": every,
                    "speedup": base / ours}
        rows.append(row)
        prev = ours
    return rows + run_shapes(quick)


def main(quick: bool = False) -> list[dict]:
    """Print the table (as ``bench/run.py`` expects); return the rows."""
    rows = run(quick=quick)
    print("Drawing a Markdown answer after every delta (lesson 6's draw)")
    print(f"(goal: a doubling costs at most {DOUBLING_GOAL:g}x; at the middle size at least "
          f"{SPEED_GOAL:g}x faster than rendering the whole text at every delta)")
    print("(CPU time, best of rounds; the baseline timed at every "
          f"{rows[1].get('baseline_sampled_every')}-th delta, times that)")
    print(f"{'deltas':>8} {'chars':>9} {'draw ms':>9} {'x2':>6} {'whole-text ms':>14} "
          f"{'speed-up':>9}")
    case = None
    for r in rows:
        if r["case"] != case:
            case = r["case"]
            print(f"  {case}")
        x2 = f"{r['ours_x2']:>6.2f}" if "ours_x2" in r else f"{'':>6}"
        base = (f"{r['baseline_s'] * 1e3:>14.0f} {r['speedup']:>8.1f}x" if "speedup" in r
                else f"{'':>14} {'':>9}")
        flag = []
        if r.get("ours_x2", 0) > DOUBLING_GOAL:
            flag.append("doubling")
        if "speedup" in r and r["speedup"] < SPEED_GOAL:
            flag.append("speed")
        print(f"{r['deltas']:>8,} {r['chars']:>9,} {r['ours_s'] * 1e3:>9.0f} {x2} {base}"
              + (f"  under the goal: {', '.join(flag)}" if flag else ""))
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller answers")
    main(quick=parser.parse_args().quick)
