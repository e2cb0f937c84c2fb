"""The learner's progress file (``my-work/.progress.json``): read and written safely.

The checkers keep each exercise's last result there, so that `progress()`
outlives a kernel restart. It is a convenience, so nothing about it may
break a check, and nothing in it may be lost:

- written whole or not at all: a temporary file beside it, then
  `os.replace` (a kernel killed mid-write leaves the old file, never half
  of the new one);
- never through a symlink: the link is replaced, its target never touched;
- read only when it is a regular file: a FIFO or device there would block
  the open or the read forever, so it is opened without waiting and looked
  at before a byte is read;
- read with a size bound and a nesting bound, so a damaged or hostile file
  cannot exhaust memory or the stack;
- a file that cannot be read as results (damaged, truncated, a link, not
  an object) is moved aside to ``.progress.json.bad-N`` and the learner is
  told once; the other lessons' results in it are kept there, not
  overwritten.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

NAME = ".progress.json"
MAX_BYTES = 256 * 1024        # a few hundred results take a few KB
MAX_DEPTH = 4                 # {lesson: {exercise: status}} nests 2 deep

_said: set[str] = set()
_stuck: set[str] = set()      # damaged files that could not be moved aside: never written


class Damaged(ValueError):
    """The file is not a progress file this module wrote."""


def read(folder: Path) -> dict[str, dict[str, str]]:
    """The results kept in `folder` (``{}`` when there are none); a damaged file is
    moved aside first, and the learner told once."""
    path = folder / NAME
    try:
        return _parse(path)
    except FileNotFoundError:
        return {}
    except (Damaged, OSError) as exc:
        _move_aside(path, str(exc))
        return {}


def write(folder: Path, results: dict[str, dict[str, str]]) -> None:
    """Write `results` whole or not at all, replacing (never following) the file."""
    path = folder / NAME
    if str(path) in _stuck:
        return
    text = json.dumps(results, indent=1, sort_keys=True) + "\n"
    temp = folder / f"{NAME}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    if temp.is_symlink():
        temp.unlink()
    fd = os.open(temp, flags, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _parse(path: Path) -> dict[str, dict[str, str]]:
    if path.is_symlink():
        raise Damaged("it is a symbolic link, which is never followed")
    # O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer forever.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Damaged("it is not a regular file")
        raw = handle.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise Damaged(f"it is larger than {MAX_BYTES // 1024} KB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Damaged("it is not UTF-8 text") from exc
    if _depth(text) > MAX_DEPTH:
        raise Damaged("it nests deeper than a progress file does")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise Damaged(f"it is not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise Damaged("it is not a JSON object")
    return {str(k): {str(n): str(s) for n, s in v.items()}
            for k, v in data.items() if isinstance(v, dict)}


def _depth(text: str) -> int:
    """How deep the brackets of JSON `text` nest (strings skipped), without parsing it."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _move_aside(path: Path, why: str) -> None:
    n = 1
    while True:
        aside = path.with_name(f"{NAME}.bad-{n}")
        if not aside.exists() and not aside.is_symlink():
            break
        n += 1
    try:
        os.replace(path, aside)     # moves a link itself, never its target
        where = f"moved it to {aside.name}"
    except OSError as exc:
        _stuck.add(str(path))
        where = f"could not move it aside ({exc.strerror or exc}), so it is left as it is"
    if str(path) not in _said:
        _said.add(str(path))
        print(f"lesson-lib: your progress file {path} could not be read ({why}); {where}; "
              "your checks are not affected.", file=sys.stderr)
