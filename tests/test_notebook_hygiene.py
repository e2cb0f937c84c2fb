"""Notebooks are source code: executed in order, no stray widget state, no timestamps.

Also keeps the learner copies (no solutions, no outputs) in step with the
source notebooks, and the solution cells in step with the tested code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lesson_lib.course import plan

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import build_notebooks  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob(plan.LESSON_GLOB))


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks/NN-*.ipynb found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_code_cell_was_executed_in_order(path):
    counts = [c["execution_count"] for c in code_cells(load(path))]
    assert None not in counts, "a code cell was never executed: run `make notebooks`"
    assert counts == list(range(1, len(counts) + 1)), "not executed top to bottom, once"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_widget_state_and_no_timestamps(path):
    nb = load(path)
    assert "widgets" not in nb["metadata"]
    for cell in nb["cells"]:
        assert "execution" not in cell.get("metadata", {})
        assert "ExecuteTime" not in cell.get("metadata", {})


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_code_cell_has_output_unless_it_is_meant_to_be_silent(path):
    for cell in code_cells(load(path)):
        source = "".join(cell["source"])
        silent = all(line.startswith(("import ", "from ", "def ", "async def ", "    ", "#", "@")) or
                     "=" in line.split("(")[0] or not line.strip()
                     for line in source.splitlines())
        if not cell["outputs"]:
            assert silent, f"cell produced no output and is not a definition:\n{source[:200]}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_one_h1_objectives_first_and_key_points_last(path):
    cells = load(path)["cells"]
    markdown = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    h1 = [line for md in markdown for line in md.splitlines() if line.startswith("# ")]
    assert len(h1) == 1, h1
    first = "".join(cells[0]["source"]).lower()
    assert cells[0]["cell_type"] == "markdown" and "objectives" in first
    last = "".join(cells[-1]["source"]).lower()
    assert cells[-1]["cell_type"] == "markdown" and "key points" in last


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_solution_cells_match_the_tested_code(path):
    for cell in load(path)["cells"]:
        target = cell.get("metadata", {}).get("solution")
        if target:
            assert "".join(cell["source"]) == build_notebooks.solution_markdown(target), \
                f"solution cell for {target} is stale: run `make notebooks`"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_learner_copy_is_in_step_and_has_no_solutions(path):
    learner = path.parent / "learner" / path.name
    assert learner.exists(), "learner copy missing: run `make notebooks`"
    expected = build_notebooks.write_learner(path, path.read_text(encoding="utf-8"))
    assert learner.read_text(encoding="utf-8") == expected, "learner copy is stale"
    nb, source = load(learner), load(path)
    assert not any(c.get("metadata", {}).get("solution") for c in nb["cells"])
    assert not any("Solution" in "".join(c["source"]) and "<details>" in "".join(c["source"])
                   for c in nb["cells"] if c["cell_type"] == "markdown")
    assert code_cells(nb) == [learner_cell(c) for c in code_cells(source)], \
        "code cells must be the source's, outputs too (none where they depend on the folder)"
    # Where each solution went, the copy says where it is.
    solutions = [c["metadata"]["solution"] for c in source["cells"]
                 if c["cell_type"] == "markdown" and c.get("metadata", {}).get("solution")]
    pointers = ["".join(c["source"]) for c in nb["cells"]
                if "The solution is not in your copy" in "".join(c["source"])]
    assert len(pointers) == len(solutions)
    for target, pointer in zip(solutions, pointers, strict=True):
        module, _, function = target.partition(":")
        assert f"`notebooks/{path.name}`" in pointer and f"`{function}`" in pointer
        assert f"`{module.replace('.', '/')}.py`" in pointer


def learner_cell(cell: dict) -> dict:
    """A source code cell as the learner's copy has it."""
    if build_notebooks.FOLDER_DEPENDENT in cell.get("metadata", {}).get("tags", []):
        return {**cell, "outputs": [], "execution_count": None}
    return cell


def learner_copy(path: Path) -> dict:
    """The learner's copy the build script makes of a source notebook, as JSON."""
    return json.loads(build_notebooks.write_learner(path, path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_learner_copy_leaves_the_instructor_notes_out(path):
    source = load(path)
    notes = [c for c in source["cells"] if c["cell_type"] == "markdown"
             and "".join(c["source"]).startswith(build_notebooks.INSTRUCTOR_NOTES)]
    if path.name != "00-start-here.ipynb":
        assert notes, "every lesson after lesson 0 has instructor notes, marked by their summary"
    copy = learner_copy(path)
    assert not any("Instructor notes" in "".join(c["source"]) for c in copy["cells"])
    assert len(copy["cells"]) == len(source["cells"]) - len(notes)


def test_no_learner_copy_shows_output_of_where_the_course_ran_it():
    # A learner's copy runs in my-work/: an output saying the notebook ran elsewhere (a
    # temporary folder, as the course's build does) is false there.
    from lesson_lib.course import learner

    for path in NOTEBOOKS:
        for cell in code_cells(learner_copy(path)):
            printed = json.dumps(cell["outputs"])
            assert f"outside {learner.FOLDER}" not in printed, path.name
            assert "a temporary folder" not in printed, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_trailing_semicolons_and_no_pip_installs(path):
    for cell in code_cells(load(path)):
        source = "".join(cell["source"])
        assert not source.rstrip().endswith(";"), source[-80:]
        assert "pip install" not in source


def test_lesson_4b_quotes_the_gemini_adapter_size_it_prints():
    # The prose states the cost of a new provider; the table above it measures it. When an
    # edit to the adapter changes the measure, the prose must change with it.
    import re
    nb = load(ROOT / "notebooks" / "04b-a-new-wire.ipynb")
    prose = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    printed = "".join("".join(o.get("text", "")) for c in code_cells(nb)
                      for o in c.get("outputs", []))
    lines, code = map(int, re.search(r"google-gemini\s+(\d+) lines,\s+(\d+) of code",
                                     printed).groups())
    quoted = re.findall(r"Gemini(?: adapter is|'s is) (\d+) lines,? \(?(\d+) of", prose)
    assert len(quoted) == 2 and all((int(a), int(b)) == (lines, code) for a, b in quoted), (
        f"lesson 4b prints {lines} lines ({code} of code) but says {quoted}")
