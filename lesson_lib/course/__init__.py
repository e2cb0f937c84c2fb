"""Side room course (lesson 0 and every lesson's first cell): the course around the lessons.

May import any station; no station imports it, except that a faulted capture is
saved into the learner's folder (`learner.learner_folder`).

- `environment`: the pinned versions, and `setup()`, the one call a notebook makes first;
- `plan`: the course plan, read from the lessons' own headers (every time figure);
- `learner`: the learner's own folder, ``my-work/``, seeded once;
- `cheat_sheet`: the wires side by side on one printed page;
- `coverage`: which of the official SDKs' stream types the corpus shows (the cheat
  sheet's last table).
"""
