"""`lesson-lib serve`: the corpus over real HTTP at the providers' own paths.

``serving()`` runs it in the background (a notebook cell, a test) and
yields its base URL; `build_app` is the Starlette app itself. The web stack
is imported on first use, so the other commands start without it.
"""

from importlib import import_module

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8765
MAX_BODY = 1024 * 1024      # bytes of a request body (1 MiB; a chat request is a few KB)
BODY_TIMEOUT_S = 10.0       # seconds for a whole request body to arrive, else 408

_LAZY = {"Settings": "app", "build_app": "app", "StartError": "background",
         "serving": "background", "settings_for": "background"}

__all__ = ["BODY_TIMEOUT_S", "DEFAULT_HOST", "DEFAULT_PORT", "MAX_BODY", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
