"""How many examples a property test tries: its own number, scaled by ``PROPERTY_EXAMPLES``.

The suite's first run (the README's `make test`) tries every property's full number. `.ci/run`
runs the suite again on a newer Python; there the search has already run in full on the same
code, and what the second run is for is the interpreter, so it sets ``PROPERTY_EXAMPLES=0.25``
and each property tries a quarter as many (never fewer than 10). The examples are derandomized
where a test says so, so a smaller number is a prefix of the same search, not a different one.
"""

from __future__ import annotations

import os

SCALE = float(os.environ.get("PROPERTY_EXAMPLES", "1"))


def examples(n: int) -> int:
    """The number of examples a property declared as `n` tries in this run."""
    if SCALE >= 1:
        return n
    return max(10, round(n * SCALE))
