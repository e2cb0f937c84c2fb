"""The SDKs' own warnings while `check` replays captures: counted, kept out of the output.

Replaying a stream through an official SDK makes pydantic warn each time the SDK
serializes a block type its models do not know (``compaction``, a Chat ``thinking``
part): dozens of lines before the command's one-line result, none about the capture.
`check` keeps them and says how many in one line; a warning raised by lesson_lib itself
is still shown as it came.
"""

from __future__ import annotations

import contextlib
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

_OURS = str(Path(__file__).resolve().parents[1])


@contextlib.contextmanager
def kept() -> Iterator[list[warnings.WarningMessage]]:
    """Collect the SDKs' warnings raised inside the block (each place and text once, as
    Python would print them); lesson_lib's own are shown at the end of the block."""
    with warnings.catch_warnings(record=True) as noted:
        warnings.simplefilter("default")
        yield noted
    ours = [w for w in noted if str(Path(w.filename).resolve()).startswith(_OURS)]
    for w in ours:
        warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)
    noted[:] = [w for w in noted if w not in ours]


def summary(noted: list[warnings.WarningMessage]) -> str | None:
    """One line saying how many SDK warnings were kept out, and the commonest; None if none."""
    if not noted:
        return None
    kinds = Counter(f"{w.category.__name__}: {str(w.message).splitlines()[0].rstrip(':')}"
                    for w in noted)
    commonest, _ = kinds.most_common(1)[0]
    plural = "s" if len(noted) != 1 else ""
    return (f"{len(noted)} warning{plural} from the SDKs while replaying, not shown "
            f"(mostly {commonest})")
