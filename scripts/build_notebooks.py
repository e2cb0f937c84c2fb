"""Build the notebooks: fill in solutions, execute from a clean kernel, strip volatile metadata.

    python scripts/build_notebooks.py [NOTEBOOK ...]      (default: every notebooks/NN-*.ipynb)
    python scripts/build_notebooks.py --learner-only      (only refresh notebooks/learner/)

First the course map's time column (README.md, and the lesson table in
notebook 00) is rewritten from the lessons' own ``**Time:**`` lines
(`lesson_lib.course.plan`), so the figures have one source. Then, for each notebook:

1. Every markdown cell whose metadata has ``"solution": "module:function"``
   is regenerated from that function's source, inside ``<details>``: the
   solution a learner sees is the tested code in ``lesson_lib.solutions``.
2. The notebook is executed top to bottom in a fresh kernel, with
   ``notebooks/`` as the working directory (cells tagged ``raises-exception``
   may raise).
3. ``metadata.widgets`` and per-cell execution timestamps are removed; outputs
   and execution counts stay, so nbval has something to compare.

Then the learner copies are written to ``notebooks/learner/``: the same
notebooks without their solution cells and without the instructor notes (the
folded cell whose summary is ``Instructor notes``), and with no output in a
cell tagged ``output-depends-on-folder`` (what it printed where the course ran
it is not what it prints in the learner's own folder).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from lesson_lib.course import plan

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LEARNER = NOTEBOOKS / "learner"
# How a cell is marked as the instructor's: its folded summary (INSTRUCTORS.md points to it).
INSTRUCTOR_NOTES = "<details><summary>Instructor notes"
# A code cell whose output says where the notebook ran (a temporary folder, when the course
# builds it): the learner's copy runs in their own folder, so it starts without that output.
FOLDER_DEPENDENT = "output-depends-on-folder"


def solution_markdown(target: str) -> str:
    """The collapsed solution cell for ``module:function``."""
    module_name, _, attr = target.partition(":")
    obj = getattr(importlib.import_module(module_name), attr)
    source = inspect.getsource(obj).rstrip()
    return ("<details><summary>Solution (click to reveal)</summary>\n\n"
            f"```python\n{source}\n```\n\n"
            f"This is `{module_name}.{attr}`, the tested solution the checker is run "
            "against in CI.\n\n</details>")


def fill_solutions(nb: nbformat.NotebookNode) -> None:
    for cell in nb.cells:
        target = cell.metadata.get("solution")
        if cell.cell_type == "markdown" and target:
            cell.source = solution_markdown(target)


def strip_volatile(nb: nbformat.NotebookNode) -> None:
    """Remove what changes on every run: widget state, timestamps."""
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)",
                                 "language": "python", "name": "python3"}
    nb.metadata.get("language_info", {}).pop("version", None)
    for number, cell in enumerate(nb.cells):
        cell.metadata.pop("execution", None)
        cell.metadata.pop("ExecuteTime", None)
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.get("outputs", []))
            for k, output in enumerate(cell.get("outputs", [])):
                output.get("metadata", {}).pop("execution", None)
                view = output.get("data", {}).get("application/vnd.jupyter.widget-view+json")
                if view:
                    # Widget state is not saved, so the id points nowhere anyway;
                    # a stable one keeps rebuilds byte-identical.
                    view["model_id"] = f"unsaved-widget-{number}-{k}"


def merge_streams(outputs: list) -> list:
    """Join adjacent outputs of the same stream: the kernel splits printed text into
    messages at arbitrary points, and a rebuild must not depend on where."""
    merged: list = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and last is not None
                and last.get("output_type") == "stream" and last.get("name") == output.get("name")):
            last["text"] = "".join(last["text"]) + "".join(output["text"])
        else:
            merged.append(output)
    return merged


def execute(nb: nbformat.NotebookNode) -> None:
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()


def solution_pointer(target: str, source_name: str) -> str:
    """What a learner copy says where a solution cell was: where the solution is."""
    module_name, _, attr = target.partition(":")
    where = f"`notebooks/{source_name}`, " if source_name else ""
    return (f"*The solution is not in your copy.* It is folded under this exercise in "
            f"{where}the course's own notebook, and its tested code is `{attr}` in "
            f"`{module_name.replace('.', '/')}.py`.")


def is_instructor_notes(cell: nbformat.NotebookNode) -> bool:
    """Whether a cell is a lesson's instructor notes (for the course's copy only)."""
    return cell.cell_type == "markdown" and cell.source.lstrip().startswith(INSTRUCTOR_NOTES)


def learner_copy(nb: nbformat.NotebookNode, source_name: str = "") -> nbformat.NotebookNode:
    """The notebook for handing out: each solution cell becomes a line saying where the
    solution is (`source_name`: the source notebook's file name), the instructor notes
    go, and a cell whose output depends on the folder it ran in keeps no output.

    Every other output stays: it is the same as the source's (solutions are
    markdown, so no code cell changes), and a learner opening the copy on GitHub
    sees a complete lesson with the exercises still to do.
    """
    copy = nbformat.from_dict(nb)
    cells = []
    for cell in copy.cells:
        if is_instructor_notes(cell):
            continue
        target = cell.metadata.get("solution") if cell.cell_type == "markdown" else None
        if target:
            cell = nbformat.v4.new_markdown_cell(solution_pointer(target, source_name),
                                                 id=cell.get("id"))
        if cell.cell_type == "code" and FOLDER_DEPENDENT in cell.metadata.get("tags", []):
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    copy.cells = cells
    return copy


def sync_times(nb: nbformat.NotebookNode, lessons: list[plan.Lesson]) -> None:
    """Course-map rows in markdown cells take their times from the plan."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = plan.sync_times(cell.source, lessons)


def build(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    sync_times(nb, plan.lessons(NOTEBOOKS))
    fill_solutions(nb)
    execute(nb)
    strip_volatile(nb)
    return nbformat.writes(nb) + "\n"


def write_learner(path: Path, text: str) -> str:
    nb = nbformat.reads(text, as_version=4)
    return nbformat.writes(learner_copy(nb, path.name)) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--learner-only", action="store_true",
                        help="only regenerate the learner copies from the built notebooks")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS.glob(plan.LESSON_GLOB))
    LEARNER.mkdir(exist_ok=True)
    if not args.learner_only:
        readme = ROOT / "README.md"
        text = readme.read_text(encoding="utf-8")
        synced = plan.sync_times(text, plan.lessons(NOTEBOOKS))
        if synced != text:
            readme.write_text(synced, encoding="utf-8")
    for path in paths:
        path = path.resolve()
        if args.learner_only:
            text = path.read_text(encoding="utf-8")
        else:
            print(f"executing {path.relative_to(ROOT)}", flush=True)
            text = build(path)
            path.write_text(text, encoding="utf-8")
        (LEARNER / path.name).write_text(write_learner(path, text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
