"""INSTRUCTORS.md's plans quote the lessons' own times, and their clocks add up."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lesson_lib import course

ROOT = Path(__file__).resolve().parent.parent
GUIDE = (ROOT / "INSTRUCTORS.md").read_text(encoding="utf-8")
PLAN = {lesson.notebook: lesson for lesson in course.lessons(ROOT / "notebooks")}
ROW = re.compile(r"^\| (\d\d):(\d\d) \| (.+?) \| ?(.*?) ?\|$", re.M)
PLANS = {"Three-hour workshop": 180, "One day": 480}


def plan_rows(heading: str) -> list[tuple[int, str, str]]:
    section = GUIDE.split(f"### {heading}\n", 1)[1].split("\n#", 1)[0]
    return [(int(h) * 60 + int(m), what, time) for h, m, what, time in ROW.findall(section)]


def minutes(time: str) -> int:
    return sum(int(n) for n in re.findall(r"\d+", time))


@pytest.mark.parametrize("heading", PLANS)
def test_each_lesson_row_quotes_the_lessons_own_time(heading):
    rows = plan_rows(heading)
    lessons = [(what, time) for _, what, time in rows if re.search(r"`\d\d-[\w-]+\.ipynb`", what)]
    assert len(lessons) >= 3
    for what, time in lessons:
        notebook = re.search(r"`(\d\d-[\w-]+\.ipynb)`", what)[1]
        assert notebook in PLAN, f"{heading}: {notebook} is not a lesson"
        assert time == PLAN[notebook].time_text, f"{heading}: {what}"


@pytest.mark.parametrize(("heading", "length"), PLANS.items())
def test_the_start_times_add_up_to_the_plans_length(heading, length):
    rows = plan_rows(heading)
    for (start, what, time), (following, _, _) in zip(rows, rows[1:], strict=False):
        assert start + minutes(time) == following, f"{heading}: {what} ({time})"
    assert rows[-1][1] == "End" and rows[-1][0] - rows[0][0] == length


def test_the_one_day_plan_teaches_every_lesson_the_workshop_does_and_more():
    def taught(heading):
        return {m[1] for _, what, _ in plan_rows(heading)
                for m in [re.search(r"`(\d\d-[\w-]+\.ipynb)`", what)] if m}
    assert taught("Three-hour workshop") < taught("One day")


def test_every_lesson_in_the_guide_has_objectives_and_sticking_points():
    objectives = GUIDE.split("## What each lesson is for", 1)[1].split("\n## ", 1)[0]
    stuck = GUIDE.split("## Where learners get stuck", 1)[1].split("\n## ", 1)[0]
    for lesson in PLAN.values():
        if lesson.number <= 3:     # the guide's plans cover lessons 0 to 3 in full
            assert re.search(rf"^\| {lesson.number} · ", objectives, re.M), lesson.notebook
            if lesson.exercises:
                assert re.search(rf"^\| {lesson.number} \|", stuck, re.M), lesson.notebook
