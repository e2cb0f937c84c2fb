"""Every module of the package imports on its own, in a fresh interpreter.

A learner's cell may import any station first (``from lesson_lib.tool_calls import
ToolCall``); an import cycle between two stations shows only when the wrong one comes
first, which the rest of the suite, importing in its own order, can hide.
"""

from __future__ import annotations

import subprocess
import sys

from import_graph import PACKAGE, module_names

MODULES = sorted(name for name in module_names(PACKAGE) if not name.endswith("__main__"))


def test_every_module_imports_first_in_a_fresh_interpreter():
    script = ("import importlib, subprocess, sys\n"
              "failed = []\n"
              "for name in sys.argv[1:]:\n"
              "    r = subprocess.run([sys.executable, '-c', f'import {name}'],\n"
              "                       capture_output=True, text=True)\n"
              "    if r.returncode:\n"
              "        failed.append(name + ': ' + r.stderr.strip().splitlines()[-1])\n"
              "print('\\n'.join(failed))\n")
    packages = sorted({name.rsplit(".", 1)[0] if name.count(".") > 1 else name
                       for name in MODULES})
    out = subprocess.run([sys.executable, "-c", script, *packages], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "", out
    assert len(packages) >= 15
