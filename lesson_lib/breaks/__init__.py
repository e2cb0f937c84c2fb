"""Lesson 5, station breaks: when the stream breaks, and what to do about it.

Downstream of the turn (lesson 4), upstream of drawing and the views.

- `faults`: broken streams derived from good captures (cut, stalled, an error
  in band, an event duplicated or swapped); `save` keeps one as a capture, and
  `visibility` says whether the wire could show it at all;
- `budget`: policies that stop a turn mid-stream; `watchdog`: a documented
  pause, or a dead stream;
- `retry`: whether a failed call may be sent again, and when; `resume`: a
  resumed stream joined on by the wire's resume point (Responses' sequence
  number, Interactions' event id); `recovery`: after an
  error that came after output, the two ways on;
- `sdk_close`: stopping a stream with the official SDK in front.
"""
