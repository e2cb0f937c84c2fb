"""The learner's own folder: ``my-work/``, seeded once, never regenerated.

The lessons in ``notebooks/`` are rebuilt by ``make notebooks`` and compared
by ``make test``; a learner who typed answers there would lose them or break
the tests. So each learner works in ``my-work/`` at the course root: it is
git-ignored (only its README is tracked), filled from the learners' copies in
``notebooks/learner/`` (no solutions, no instructor notes, and no output that
says where the course's own build ran: ``scripts/build_notebooks.py``) when a
lesson is missing from it, and never written over. ``make lab`` seeds it and so does `lesson_lib.setup()` (a JupyterHub or
Binder has no ``make``). The exercise checkers keep the learner's results in a
small file inside it (`PROGRESS_FILE`), and only there.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from . import plan

FOLDER = "my-work"
PROGRESS_FILE = ".progress.json"


@dataclass(frozen=True)
class Seeded:
    """What `seed` did: the learner's folder and the lessons it copied into it."""

    folder: Path | None
    copied: tuple[str, ...] = ()

    def __repr__(self) -> str:
        if self.folder is None:
            return "no course checkout found: nothing seeded"
        if not self.copied:
            return f"your own folder: {self.folder} (nothing new to copy)"
        return f"your own folder: {self.folder} (copied {', '.join(self.copied)})"


def course_root(start: Path | None = None) -> Path | None:
    """The checkout this package belongs to (it has ``notebooks/learner/``), or None.

    An editable install (``pip install -e .``, what ``make`` and
    ``environment.yml`` do) finds it from the package itself; otherwise the
    working directory and its parents are tried.
    """
    candidates = [Path(__file__).resolve().parents[2]]     # lesson_lib/course/ -> the repo
    here = (start or Path.cwd()).resolve()
    candidates += [here, *here.parents]
    for root in candidates:
        if (root / "notebooks" / "learner").is_dir() and (root / "lesson_lib").is_dir():
            return root
    return None


def seed(root: Path | None = None) -> Seeded:
    """Copy each learner notebook missing from ``my-work/`` into it; never overwrite.

    A lesson added to the course later appears on the next call; a lesson
    the learner has opened (or deleted on purpose and recreated) stays as it is.
    """
    root = root or course_root()
    if root is None:
        return Seeded(None)
    source, folder = root / "notebooks" / "learner", root / FOLDER
    folder.mkdir(exist_ok=True)
    copied = []
    for notebook in sorted(source.glob(plan.LESSON_GLOB)):
        target = folder / notebook.name
        if not target.exists():
            shutil.copyfile(notebook, target)
            copied.append(notebook.name)
    return Seeded(folder, tuple(copied))


def learner_folder(cwd: Path | None = None) -> Path | None:
    """The learner's folder when the current directory is inside one, else None.

    A notebook's kernel runs in the notebook's own folder, so this is how the
    checkers tell a learner's notebook (in ``my-work/``) from a source lesson
    run by ``make notebooks`` or nbval (in ``notebooks/``), which must never
    read or write progress.
    """
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if folder.name == FOLDER:
            return folder
    return None
