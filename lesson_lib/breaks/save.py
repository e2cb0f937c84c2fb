"""Saving a faulted capture as a capture of its own, in the learner's folder.

A fault of `lesson_lib.breaks.faults` gives a `Capture` in memory. Saving it writes
the same two files a recorded capture has, through the writer ``record``
uses (`lesson_lib.capture.capture_writer.write_capture`): ``NAME`` + the wire's
suffix (``.sse``; ``.eventstream`` on Bedrock), the faulted bytes verbatim, and ``NAME.json``, its sidecar, whose ``provenance`` says it
was constructed by a fault, from which capture, and which fault at which
place. ``lesson_lib.capture.captures.load(path)`` and ``lesson-lib events PATH`` read
it back like any other capture.

Two steps, so the decision can be tested without a disk:

- `plan` (pure): the name, the bytes and the sidecar to write, or the
  `Diagnostic`s that say why not (a bad name, nothing was broken, a sidecar
  that cannot be written as JSON: a set, bytes, ``NaN``, a lone surrogate, a
  loop, or nesting deeper than Python's JSON writer follows);
- `save`: writes a plan into a folder (``WIRE/NAME`` + the wire's suffix, as in the
  corpus), never over an existing capture unless told to.

Where it goes by default (`default_folder`): ``my-work/captures/`` when the
notebook runs in the learner's own folder (``my-work/``, see
`lesson_lib.course.learner`). Anywhere else (the source lessons run by
``make notebooks`` and nbval, the tests) it goes to a temporary folder of
this process, so nothing outside a temporary folder is ever written; the
exercise checkers' progress file follows the same rule.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import wires
from ..capture.capture_writer import write_capture
from ..capture.captures import Capture
from ..course import learner
from ..diagnostics import Diagnostic

CAPTURES = "captures"           # the folder inside my-work/
MAX_NAME = 100
# Letters, digits, dot, dash, underscore; first a letter or digit. No folder parts.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Plan:
    """What `save` would write: the name, the body and the sidecar; or why it cannot."""

    name: str
    wire: str | None
    body: bytes = b""
    sidecar: dict[str, Any] = field(default_factory=dict)
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.diagnostics


@dataclass(frozen=True)
class Saved:
    """Where a faulted capture was saved (`path` to its body file), or why it was not."""

    name: str
    path: Path | None
    shown_as: str = ""                 # the folder as a reader should see it
    temporary: bool = False
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        return self.path is not None

    def __repr__(self) -> str:
        if self.path is None:
            return "not saved: " + "; ".join(str(d) for d in self.diagnostics)
        if self.temporary:
            return (f"saved {self.path.name} (+ .json) in a temporary folder: this notebook "
                    f"runs outside {learner.FOLDER}/, so nothing is kept")
        return f"saved {self.shown_as}/{self.path.name} (+ .json)"

    __str__ = __repr__


def check_name(name: str) -> Diagnostic | None:
    """A `bad_capture_name` diagnostic when `name` cannot be a capture's file name, else None.

    A name is one file name without extension: letters, digits, ``.``, ``-``
    and ``_``, starting with a letter or digit, at most 100 characters; no
    folder parts, no ``..``, and not ending in ``.sse`` or ``.json`` (the
    extensions are added).
    """
    problem = None
    if not isinstance(name, str) or not name:
        problem = "a capture needs a name"
    elif len(name) > MAX_NAME:
        problem = f"{len(name)} characters; at most {MAX_NAME}"
    elif "/" in name or "\\" in name:
        problem = "a name is a file name, not a path (no / or \\)"
    elif ".." in name:
        problem = "a name may not contain '..'"
    elif not _NAME.fullmatch(name):
        problem = ("use letters, digits, '.', '-' and '_' only, starting with a letter "
                   "or digit")
    elif name.lower().endswith((".sse", ".json")):
        problem = "leave out the extension: .sse and .json are added"
    if problem is None:
        return None
    return Diagnostic("bad_capture_name", f"{name!r}: {problem}", extra={"name": name})


def default_name(faulted: Capture) -> str:
    """``SOURCE.FAULT-AT``, from the faulted capture's own name and its sidecar's ``fault``."""
    fault = _field(faulted.sidecar, "fault")
    at = fault.get("at") if isinstance(fault, dict) else None
    where = "-".join(str(a) for a in at) if isinstance(at, list) else str(at)
    name = faulted.name if at is None else f"{faulted.name}-{where}"
    return name[:MAX_NAME]


def plan(source: Capture, faulted: Capture, name: str | None = None) -> Plan:
    """The files for `faulted` (broken from `source`) as a capture of its own. Pure.

    The sidecar is the faulted capture's (its chunking, request, response,
    ``fault`` and ``demonstrates``), with ``provenance`` saying it was
    constructed by a fault: ``{"kind": "constructed", "by": "fault",
    "based_on": SOURCE_KEY, "fault": {...}, "source_provenance": ...}``.
    """
    name = default_name(faulted) if name is None else name
    problems = []
    bad = check_name(name)
    if bad is not None:
        problems.append(bad)
    fault = _field(faulted.sidecar, "fault")
    if not isinstance(fault, dict) or not fault.get("kind"):
        problems.append(Diagnostic("nothing_to_save", f"{faulted.key} is not a faulted capture "
                                   "(its sidecar names no fault): pick a fault first"))
    if not isinstance(faulted.wire, str) or faulted.wire not in wires.WIRES:
        # The wire names a folder: only a wire the course knows may do that.
        problems.append(Diagnostic("unknown_wire", f"{faulted.key} says its wire is "
                                   f"{str(faulted.wire)[:60]!r}, which is none of "
                                   f"{', '.join(sorted(wires.WIRES))}: nothing to save"))
    sidecar, fault_copy = None, None
    if not problems:
        # Copied through the text `write_capture` will write, so what cannot be written
        # is found here, before a byte is on disk, and the copy shares nothing.
        sidecar, why = _json_copy(faulted.sidecar)
        fault_copy, _ = _json_copy(fault)
        if why is not None:
            problems.append(_not_json(faulted.key, why))
    if problems or not isinstance(sidecar, dict):
        return Plan(name if isinstance(name, str) else "", faulted.wire,
                    diagnostics=tuple(problems))
    if faulted.wire and not sidecar.get("wire"):
        sidecar["wire"] = faulted.wire
    source_provenance = _field(source.sidecar, "provenance")
    kind = source_provenance.get("kind") if isinstance(source_provenance, dict) else None
    sidecar["provenance"] = {
        "kind": "constructed", "by": "fault", "based_on": source.key,
        "fault": fault_copy,
        "source_provenance": kind if isinstance(kind, str) else None,
        "timing": "the source capture's, as the fault left it",
    }
    # The provenance nests the fault two levels deeper than the sidecar held it.
    _, why = _json_copy(sidecar)
    if why is not None:
        return Plan(name, faulted.wire, diagnostics=(_not_json(faulted.key, why),))
    return Plan(name, faulted.wire, faulted.body, sidecar)


def _field(sidecar: Any, name: str) -> Any:
    return sidecar.get(name) if isinstance(sidecar, dict) else None


def _json_copy(value: Any) -> tuple[Any, str | None]:
    """`value` read back from the JSON text `write_capture` writes: (the copy, None), or
    (None, why it cannot be written). Never raises."""
    try:
        text = json.dumps(value, indent=1, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")            # a lone surrogate cannot reach a UTF-8 file
        return json.loads(text), None
    except RecursionError:
        return None, "it nests deeper than Python's JSON writer follows"
    except UnicodeEncodeError:
        return None, "its text holds a lone UTF-16 surrogate, which UTF-8 cannot write"
    except (TypeError, ValueError) as exc:
        return None, str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def _not_json(key: str, why: str) -> Diagnostic:
    return Diagnostic("sidecar_not_json", f"{key}'s sidecar cannot be saved as JSON ({why}): "
                      "nothing written")


_TEMPORARY: list[Path] = []


def default_folder() -> tuple[Path, bool]:
    """Where captures are saved by default, and whether that folder is temporary.

    ``my-work/captures/`` when the notebook runs in the learner's folder;
    otherwise one temporary folder per process (see the module docstring).
    """
    mine = learner.learner_folder()
    if mine is not None:
        return mine / CAPTURES, False
    if not _TEMPORARY:
        _TEMPORARY.append(Path(tempfile.mkdtemp(prefix="rtw-saved-captures-")))
    return _TEMPORARY[0], True


def save(source: Capture, faulted: Capture, name: str | None = None, *,
         folder: Path | str | None = None, overwrite: bool = False) -> Saved:
    """Write `faulted` as ``FOLDER/WIRE/NAME`` + the wire's suffix (its registry entry's:
    ``.sse``, ``.eventstream`` on Bedrock) and ``NAME.json``; never raises for bad input.

    `folder` defaults to `default_folder`. An existing capture of that name
    is left alone (diagnostic ``capture_exists``) unless `overwrite`; a
    folder that cannot be written gives ``cannot_write``.
    """
    planned = plan(source, faulted, name)
    if not planned.ok:
        return Saved(planned.name, None, diagnostics=planned.diagnostics)
    if folder is None:
        base, temporary = default_folder()
        shown = "a temporary folder" if temporary else f"{learner.FOLDER}/{CAPTURES}"
    else:
        base, temporary, shown = Path(folder), False, str(folder)
    target = base / str(planned.wire)
    shown = f"{shown}/{planned.wire}"
    suffix = wires.entry_for(planned.wire).suffix
    files = (target / f"{planned.name}{suffix}", target / f"{planned.name}.json")
    # A link is never followed: not the wire's folder, not either file (a dangling one
    # would create a file elsewhere, a live one overwrite its target).
    links = [p for p in (target, *files) if p.is_symlink()]
    if links:
        return Saved(planned.name, None, shown, temporary, (Diagnostic(
            "link_in_the_way", f"{shown}/{links[0].name} is a symbolic link, which is never "
            "followed; remove it or choose another name", extra={"path": str(links[0])}),))
    existing = [p for p in files if p.exists()]
    if existing and not overwrite:
        where = (f"{planned.wire}/{existing[0].name} in the temporary folder" if temporary
                 else f"{shown}/{existing[0].name}")
        return Saved(planned.name, None, shown, temporary, (Diagnostic(
            "capture_exists", f"{where} already exists; choose another name, or save with "
            "overwrite=True to replace it", extra={"path": str(existing[0])}),))
    try:
        path = write_capture(target, planned.name, planned.body, planned.sidecar, suffix)
    except OSError as exc:
        return Saved(planned.name, None, shown, temporary, (Diagnostic(
            "cannot_write", f"cannot write into {shown}: {exc.strerror or exc}"),))
    return Saved(planned.name, path, shown, temporary)


__all__ = ["Plan", "Saved", "check_name", "default_folder", "default_name", "plan", "save"]
