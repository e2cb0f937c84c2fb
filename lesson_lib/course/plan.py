"""The course plan, read from the lessons themselves: one source for every time figure.

Each lesson notebook's header says ``**Time:** 60 minutes (35 teaching / 25
exercises).``; that line is the source. The README's course map, notebook
00's table of lessons and the instructors' plans quote it, and `sync_times`
rewrites their time column from it (``make notebooks`` does), so the figures
cannot drift. New lessons join the plan by being in ``notebooks/``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

# Lessons being written: a lesson's "Next" may already link to them.
UPCOMING: tuple[str, ...] = ()

# A lesson's notebook: ``NN-topic.ipynb``, or ``NNx-topic.ipynb`` for a short lesson after
# lesson NN (``04b-...``). `LESSON_GLOB` finds them (sorted, a lettered lesson follows its
# number's), `NOTEBOOK_NAME` reads one in text.
LESSON_GLOB = "[0-9][0-9]*-*.ipynb"
NOTEBOOK_NAME = r"\d\d[a-z]?-[\w-]+\.ipynb"
LESSON_NAME = re.compile(r"^(\d\d)([a-z]?)-")
TIME_LINE = re.compile(r"\*\*Time:\*\* (\d+) minutes \((\d+) teaching / (\d+) exercises\)")
TITLE_LINE = re.compile(r"^# (?:Lesson \d+[a-z]? · )?(.+)$", re.M)
TIMING_NOTE = re.compile(r"\*\*Timing\.\*\*(.+?)(?:\n- |\n\n|$)", re.S)
# A course-map row: | 1 | `01-raw-events.ipynb`... | ... | 40 + 20 min |
MAP_ROW = re.compile(rf"^(\| *(\d+[a-z]?) *\| *`({NOTEBOOK_NAME})`.*\| *)([^|]*?)( *\|)$", re.M)


@dataclass(frozen=True)
class Lesson:
    """One lesson's place in the plan: its number, notebook, title and minutes."""

    number: int
    notebook: str
    title: str
    teaching: int
    exercises: int
    timing_note: str | None = None   # the instructor notes' "Timing." line, if any
    label: str = ""                  # how the course names it: "4", or "4b" for 04b-...

    @property
    def minutes(self) -> int:
        return self.teaching + self.exercises

    @property
    def time_text(self) -> str:
        """How the course map writes it: "35 + 25 min" (or "10 min" with no exercises)."""
        if not self.exercises:
            return f"{self.teaching} min"
        return f"{self.teaching} + {self.exercises} min"


def read_lesson(path: Path) -> Lesson | None:
    """A lesson's plan from its notebook's header cell (None when it has no Time line)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    text = "\n\n".join("".join(c["source"]) for c in cells[:4] if c["cell_type"] == "markdown")
    time = TIME_LINE.search(text)
    if time is None:
        return None
    total, teaching, exercises = (int(g) for g in time.groups())
    if total != teaching + exercises:
        raise ValueError(f"{path.name}: Time says {total} minutes, but {teaching} + "
                         f"{exercises} = {teaching + exercises}")
    title = TITLE_LINE.search(text)
    note = TIMING_NOTE.search(text)
    name = LESSON_NAME.match(path.name)
    number, letter = (int(name[1]), name[2]) if name else (int(path.name[:2]), "")
    return Lesson(number, path.name, title[1].strip() if title else path.stem,
                  teaching, exercises, " ".join(note[1].split()) if note else None,
                  f"{number}{letter}")


def lessons(notebooks: Path) -> list[Lesson]:
    """Every lesson in `notebooks` (``NN-*.ipynb``, ``NNb-*.ipynb``) that states its time,
    in order."""
    found = (read_lesson(p) for p in sorted(notebooks.glob(LESSON_GLOB)))
    return [lesson for lesson in found if lesson is not None]


def sync_times(text: str, plan: list[Lesson]) -> str:
    """`text` with the last column of every course-map row set from `plan`.

    Rows for a notebook the plan does not know are left as they are.
    """
    by_name = {lesson.notebook: lesson for lesson in plan}

    def row(match: re.Match) -> str:
        lesson = by_name.get(match[3])
        return f"{match[1]}{lesson.time_text}{match[5]}" if lesson else match[0]
    return MAP_ROW.sub(row, text)


def timing_note_minutes(note: str) -> tuple[list[int], int, list[int]]:
    """The instructor notes' timing line, split: section minutes, exercise minutes, and the
    per-exercise split in parentheses ("exercises: 25 min (8 + 7 + 10)")."""
    head, _, tail = note.partition("exercises:")
    sections = [int(m) for m in re.findall(r"(\d+) min", head)]
    total = re.match(r"\s*(\d+) min", tail)
    split = re.search(r"\(([\d +]+)\)", tail)
    return (sections, int(total[1]) if total else 0,
            [int(n) for n in split[1].split("+")] if split else [])
