"""Every lesson, side room exercises: grade a learner's function against captures, offline.

Each lesson's checker module (``lesson_lib.exercises.lesson01`` ...) registers
its exercises with `exercise` and grades with `grade`: the learner's function
runs on a list of `Case`s (built from captures, so no key or network is
needed), and the first mismatch is explained in the learner's terms.

A function whose body still raises ``NotImplementedError`` counts as "not
attempted yet"; `progress()` summarises a lesson's exercises, from a fresh
kernel too: it imports the lesson's checker module itself, and in a learner's
own folder (``my-work/``) it also reads the results kept in that folder's
progress file (`lesson_lib.course.learner.PROGRESS_FILE`), so they outlive a kernel
restart. Anywhere else (the source notebooks run by ``make notebooks`` and
nbval, the tests) nothing is read or written, so outputs stay deterministic.
"""

from __future__ import annotations

import importlib
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..capture.captures import Capture, load
from ..course import learner
from . import progress_file
from .compare import first_difference


@dataclass(frozen=True)
class Case:
    """One input to try: a label the learner recognises, the arguments, the answer.

    `explain(expected, got)` may return a sentence for a mismatch (or None
    when they agree); the default compares values and names the first
    difference.
    """

    label: str
    args: tuple
    expected: Any
    explain: Callable[[Any, Any], str | None] | None = None


@dataclass(frozen=True)
class Exercise:
    lesson: str
    number: int
    title: str
    solution: str  # "module:function", the tested solution shown in the notebook


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check: passed, failed (with the first difference), or not attempted."""

    exercise: Exercise
    status: str          # "passed" | "failed" | "not attempted"
    message: str
    cases_passed: int = 0
    cases_total: int = 0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __repr__(self) -> str:
        mark = {"passed": "PASS", "failed": "FAIL", "not attempted": "TODO"}[self.status]
        head = f"[{mark}] Exercise {self.exercise.number} ({self.exercise.title})"
        return f"{head}: {self.message}"

    __str__ = __repr__


REGISTRY: dict[tuple[str, int], Exercise] = {}
_RESULTS: dict[tuple[str, int], Verdict] = {}


def exercise(lesson: str, number: int, title: str, solution: str) -> Exercise:
    """Register an exercise (called once by each lesson's checker module)."""
    ex = Exercise(lesson, number, title, solution)
    REGISTRY[(lesson, number)] = ex
    return ex


def grade(ex: Exercise, fn: Callable[..., Any], cases: Iterable[Case]) -> Verdict:
    """Run `fn` on every case; stop at the first mismatch and explain it."""
    cases = list(cases)
    passed = 0
    for case in cases:
        try:
            got = fn(*case.args)
        except NotImplementedError:
            return _record(Verdict(ex, "not attempted",
                                   "not attempted yet (the function still raises "
                                   "NotImplementedError)", 0, len(cases)))
        except Exception as exc:  # the learner's bug, reported, not raised
            return _record(Verdict(ex, "failed",
                                   f"case '{case.label}': your function raised "
                                   f"{type(exc).__name__}: {exc}{_learner_line(exc)}",
                                   passed, len(cases)))
        explain = case.explain or first_difference
        problem = explain(case.expected, got)
        if problem:
            return _record(Verdict(ex, "failed", f"case '{case.label}': {problem}",
                                   passed, len(cases)))
        passed += 1
    return _record(Verdict(ex, "passed", f"all {len(cases)} cases pass", passed, len(cases)))


def _learner_line(exc: BaseException) -> str:
    """Where in the learner's own code it went wrong (not deep inside a library)."""
    frames = traceback.extract_tb(exc.__traceback__)[1:]  # [0] is grade() itself
    own = [f for f in frames if not _is_library(f.filename)]
    return f" (line {own[-1].lineno} of your code)" if own else ""


def _is_library(filename: str) -> bool:
    return ("site-packages" in filename or "/lib/python3" in filename
            or filename.startswith(__file__.rsplit("/exercises/", 1)[0]))


@cache
def corpus_capture(key: str) -> Capture:
    """A capture of the project's own corpus, loaded once for all checkers."""
    return load(key, search_reference=False)


def _record(verdict: Verdict) -> Verdict:
    _RESULTS[(verdict.exercise.lesson, verdict.exercise.number)] = verdict
    folder = learner.learner_folder()
    if folder is not None:
        try:
            stored = progress_file.read(folder)
            stored.setdefault(verdict.exercise.lesson, {})[str(verdict.exercise.number)] = \
                verdict.status
            progress_file.write(folder, stored)
        except OSError:
            pass  # progress is a convenience: never let it break a check
    return verdict


def _stored(folder) -> dict[str, dict[str, str]]:
    """The results kept in a learner's folder ({} when none; see `progress_file`)."""
    try:
        return progress_file.read(folder)
    except OSError:
        return {}


@dataclass(frozen=True)
class Progress:
    """Where a learner stands in one lesson: one line per exercise."""

    lesson: str
    lines: tuple[str, ...]

    def __repr__(self) -> str:
        return "\n".join((f"Progress in {self.lesson}:",) + self.lines)


def progress(lesson: str | int) -> Progress:
    """Summarise which of a lesson's exercises pass, fail or wait to be attempted.

    `lesson` is "01" (or 1), or "04b" for a short lesson after lesson 4. Works
    from a fresh kernel: the lesson's checker module is imported here, and in
    a learner's folder earlier results come from its progress file.
    """
    lesson = f"{int(lesson):02d}" if str(lesson).isdigit() else str(lesson)
    if not (lesson[:2].isdigit() and (len(lesson) == 2 or (len(lesson) == 3
                                                           and lesson[2].islower()))):
        return Progress(lesson, (f"  no lesson {lesson!r}: lessons are numbered, "
                                 "progress(1) or progress(\"01\")",))
    module = f"{__name__}.lesson{lesson}"
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        return Progress(lesson, (f"  no exercises for lesson {lesson!r}",))
    folder = learner.learner_folder()
    stored = _stored(folder).get(lesson, {}) if folder is not None else {}
    lines = []
    for (les, num), ex in sorted(REGISTRY.items()):
        if les != lesson:
            continue
        verdict = _RESULTS.get((les, num))
        status = verdict.status if verdict else stored.get(str(num), "not checked yet")
        lines.append(f"  Exercise {num} ({ex.title}): {status}")
    return Progress(lesson, tuple(lines))


def reset() -> None:
    """Forget recorded verdicts (tests use this)."""
    _RESULTS.clear()
