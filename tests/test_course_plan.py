"""Every time figure and every count quoted about the course agrees with its one source."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lesson_lib.capture.captures import corpus
from lesson_lib.course import plan
from lesson_lib.views.event_table import TOOL_ARGUMENT_DELTAS, event_table

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
PLAN = plan.lessons(NOTEBOOKS)
LESSON_FILES = sorted(NOTEBOOKS.glob(plan.LESSON_GLOB))


def markdown(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def test_every_lesson_states_its_time():
    assert [lesson.notebook for lesson in PLAN] == [p.name for p in LESSON_FILES]


@pytest.mark.parametrize("lesson", [p for p in PLAN if p.exercises], ids=lambda p: p.notebook)
def test_the_instructor_notes_timing_adds_up_to_the_header(lesson):
    assert lesson.timing_note, f"{lesson.notebook} has no **Timing.** line in its instructor notes"
    sections, exercises, split = plan.timing_note_minutes(lesson.timing_note)
    assert sum(sections) == lesson.teaching, lesson.timing_note
    assert exercises == lesson.exercises and sum(split) == lesson.exercises, lesson.timing_note


@pytest.mark.parametrize("text", ["README.md", "00-start-here.ipynb"])
def test_the_course_maps_quote_the_lessons_times(text):
    path = ROOT / text if text.endswith(".md") else NOTEBOOKS / text
    source = path.read_text(encoding="utf-8") if text.endswith(".md") else markdown(path)
    rows = plan.MAP_ROW.findall(source)
    assert {r[2] for r in rows} >= {p.notebook for p in PLAN if p.number}, "a lesson is missing"
    assert plan.sync_times(source, PLAN) == source, "run `make notebooks`"


def test_sync_times_rewrites_a_drifted_row_and_leaves_unknown_ones():
    drifted = ("| 1 | `01-raw-events.ipynb`: Reading | objectives | 40 + 20 min |\n"
               "| 9 | `09-later.ipynb` | not written yet | 30 min |")
    lesson = next(p for p in PLAN if p.number == 1)
    synced = plan.sync_times(drifted, PLAN).splitlines()
    assert synced[0].endswith(f"| {lesson.time_text} |") and synced[1] == drifted.splitlines()[1]


def test_a_header_whose_total_does_not_add_up_is_refused(tmp_path):
    bad = tmp_path / "07-bad.ipynb"
    bad.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": [
        "# Lesson 7 · Bad\n", "**Time:** 50 minutes (35 teaching / 25 exercises)."]}]}))
    with pytest.raises(ValueError, match="35 \\+ 25 = 60"):
        plan.read_lesson(bad)


def test_delta_counts_quoted_by_a_sidecar_are_the_real_ones():
    quoted = 0
    for cap in corpus():
        said = re.search(r"\(([\d,]+) deltas\)", cap.demonstrates or "")
        if said:
            table = event_table(cap)
            real = int(table["delta_type"].isin(TOOL_ARGUMENT_DELTAS).sum())
            assert int(said[1].replace(",", "")) == real, cap.key
            quoted += 1
    assert quoted >= 1
    assert not any("about 1,300" in (c.demonstrates or "") for c in corpus())


def test_links_between_lessons_point_at_real_notebooks():
    for path in LESSON_FILES:
        for target in re.findall(rf"\]\(({plan.NOTEBOOK_NAME})\)", markdown(path)):
            assert (NOTEBOOKS / target).exists() or target in plan.UPCOMING, (
                f"{path.name} links to a missing {target}")


def test_every_lesson_but_the_last_ends_with_a_link_to_the_next():
    for path, following in zip(LESSON_FILES, LESSON_FILES[1:], strict=False):
        if path.name.startswith("00"):
            continue
        last = markdown(path).rsplit("**Next:**", 1)
        assert len(last) == 2 and f"]({following.name})" in last[1], path.name
