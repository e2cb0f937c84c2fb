"""`lesson-lib serve`: the corpus over real HTTP at the providers' own paths.

``serving()`` runs it in the background (a notebook cell, a test) and
yields its base URL; `build_app` is the Starlette app itself.
"""

from .app import Settings, build_app
from .background import DEFAULT_HOST, DEFAULT_PORT, StartError, serving, settings_for

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "Settings", "StartError", "build_app", "serving",
           "settings_for"]
