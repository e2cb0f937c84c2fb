"""The corpus builders: they write the project's own capture corpus.

Each wire's builder writes realistic, messy streams (padding, pings,
unstable key order, extra fields, synthetic but realistic timing) with a
sidecar that says what the capture demonstrates and what the official SDK
does with it. `build_all` writes the whole corpus; rebuilding gives the
same bytes. The builders live outside ``lesson_lib``: a learner's
notebook never needs them, and ``scripts/build_captures.py`` and the tests
import them as ``corpus``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

BUILDERS = ("anthropic_corpus", "responses_corpus", "chat_corpus", "gemini_corpus",
            "bedrock_corpus", "gemini_interactions_corpus", "managed_agents_corpus",
            "openai_sessions_corpus")


def build_all(root: Path) -> list[Path]:
    """Write every constructed capture under `root/<wire>/`; return the paths."""
    paths: list[Path] = []
    for name in BUILDERS:
        module = importlib.import_module(f"{__name__}.{name}")
        paths.extend(module.build(root))
    return paths
