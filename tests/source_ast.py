"""`parse`: `ast.parse` for the tests that read the package's source.

CPython 3.11 can fail an `ast.parse` with "SystemError: AST constructor recursion
depth mismatch" when a garbage collection runs a finalizer while the tree's objects are
built (seen under `pytest -n`, after the live tests leave clients and transports to be
collected). Collection is held off while one file's tree is built.
"""

from __future__ import annotations

import ast
import gc


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """The module's tree, built with the garbage collector held off."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source, filename)
    finally:
        if enabled:
            gc.enable()
