"""Every lesson, at the head of the river: the one typed diagnostic every station reports with.

Problems in a stream never raise: each station returns `Diagnostic` values
beside everything that did arrive. The type lives here, above the capture
station, so that any station (the decoders first) can import it without
importing a station upstream of itself: this package imports nothing else
from `lesson_lib`.

- `diagnostic`: `Diagnostic` and its `Severity`.
"""

from .diagnostic import Diagnostic, Severity

__all__ = ["Diagnostic", "Severity"]
