"""`check` speaks clearly: the SDKs' warnings while replaying are one line, not dozens.

Replaying a compaction block or Chat ``thinking`` parts through the official SDKs makes
pydantic print a serializer warning per chunk before the command's result.
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

WARNING_CAPTURES = ["captures/anthropic-messages/compaction-stop.sse",
                    "captures/openai-chat/thinking-parts-no-done.sse",
                    "captures/anthropic-messages/hello.sse"]


def test_check_prints_its_results_and_one_line_for_the_sdks_warnings():
    out = subprocess.run([sys.executable, "-m", "lesson_lib", "check", *WARNING_CAPTURES],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    results = [line for line in out.stdout.splitlines() if not line.startswith(" ")]
    assert results == [f"ok   {c}: ended" for c in WARNING_CAPTURES]
    assert "Pydantic" not in out.stdout
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr[:2000]
    assert re.fullmatch(r"lesson-lib: check: \d+ warnings from the SDKs while replaying, "
                        r"not shown \(mostly UserWarning: Pydantic serializer warnings\)",
                        lines[0]), lines[0]


def test_only_the_sdks_warnings_are_kept_lesson_lib_s_own_are_shown(recwarn):
    from lesson_lib.cli import sdk_warnings

    registry: dict = {}     # a module's own: the same place and text is printed once
    with sdk_warnings.kept() as noted:
        for _ in range(2):
            warnings.warn_explicit("a library's note", UserWarning, "/elsewhere/pydantic/main.py",
                                   1, registry=registry)
        warnings.warn_explicit("another note", DeprecationWarning, "/elsewhere/openai/x.py", 2)
        warnings.warn_explicit("ours", UserWarning, sdk_warnings.__file__, 3)
    assert [str(w.message) for w in noted] == ["a library's note", "another note"]
    assert sdk_warnings.summary(noted) == ("2 warnings from the SDKs while replaying, not "
                                           "shown (mostly UserWarning: a library's note)")
    assert sdk_warnings.summary([]) is None
    assert [str(w.message) for w in recwarn] == ["ours"]
