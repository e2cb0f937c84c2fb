"""Lesson 2, the OpenAI Chat Completions wire: chunks in, the final ``chat.completion`` out.

`core` is the lesson's rule (choices by index, tool calls by id, then index; a
call ends at its choice's ``finish_reason``); the modules beside it hold the
features around it, each named for what it handles (see `core`).
"""

from .core import ChatAccumulator

__all__ = ["ChatAccumulator"]
