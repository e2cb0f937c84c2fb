"""Lesson 2, the OpenAI Responses wire: events in, the final `Response` and its changes out.

`ResponsesAccumulator` is composed of one object per concern; the modules
of this package say which (see `lesson_lib.accumulate.responses.accumulator`).
"""

from .accumulator import ResponsesAccumulator

__all__ = ["ResponsesAccumulator"]
