"""Side room cli (lesson 0 section 5, lesson 6): ``python -m lesson_lib`` and ``lesson-lib``.

May import any station; no station imports it.

- `commands`: the command line (``events``, ``check``, ``list``, ``final``,
  ``serve``, ``record``, ``turn``);
- `validate`: what ``check`` runs on a capture;
- `serve`: the corpus over HTTP, with its recorded timing or broken on purpose.
"""
