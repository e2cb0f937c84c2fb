"""INSTRUCTORS.md's plans quote the lessons' own times, and their clocks add up."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lesson_lib.course import plan

ROOT = Path(__file__).resolve().parent.parent
GUIDE = (ROOT / "INSTRUCTORS.md").read_text(encoding="utf-8")
PLAN = {lesson.notebook: lesson for lesson in plan.lessons(ROOT / "notebooks")}
ROW = re.compile(r"^\| (\d\d):(\d\d) \| (.+?) \| ?(.*?) ?\|$", re.M)
PLANS = {"Three-hour workshop": 180, "One day": 480, "Second morning": 275}


def plan_rows(heading: str) -> list[tuple[int, str, str]]:
    section = GUIDE.split(f"### {heading}\n", 1)[1].split("\n#", 1)[0]
    return [(int(h) * 60 + int(m), what, time) for h, m, what, time in ROW.findall(section)]


def minutes(time: str) -> int:
    return sum(int(n) for n in re.findall(r"\d+", time))


@pytest.mark.parametrize("heading", PLANS)
def test_each_lesson_row_quotes_the_lessons_own_time(heading):
    rows = plan_rows(heading)
    lessons = [(what, time) for _, what, time in rows if re.search(rf"`{plan.NOTEBOOK_NAME}`", what)]
    assert len(lessons) >= 2
    for what, time in lessons:
        notebook = re.search(rf"`({plan.NOTEBOOK_NAME})`", what)[1]
        assert notebook in PLAN, f"{heading}: {notebook} is not a lesson"
        assert time == PLAN[notebook].time_text, f"{heading}: {what}"


@pytest.mark.parametrize(("heading", "length"), PLANS.items())
def test_the_start_times_add_up_to_the_plans_length(heading, length):
    rows = plan_rows(heading)
    for (start, what, time), (following, _, _) in zip(rows, rows[1:], strict=False):
        assert start + minutes(time) == following, f"{heading}: {what} ({time})"
    assert rows[-1][1] == "End" and rows[-1][0] - rows[0][0] == length


def taught(heading: str) -> set[str]:
    return {m[1] for _, what, _ in plan_rows(heading)
            for m in [re.search(rf"`({plan.NOTEBOOK_NAME})`", what)] if m}


def test_the_one_day_plan_teaches_every_lesson_the_workshop_does_and_more():
    assert taught("Three-hour workshop") < taught("One day")


def test_the_one_day_plan_gives_each_lesson_its_own_slot_or_says_where_it_goes():
    # Lessons 4 and 5 once shared one 60-minute slot. A lesson the day has no room for is
    # named in the plan's prose, with where to teach it instead.
    section = GUIDE.split("### One day\n", 1)[1].split("\n#", 1)[0]
    prose = section.split("\n|", 1)[0]
    # The day is lessons 0 to 5; a short lettered lesson (4b) may go to the prose, like lesson 6.
    assert taught("One day") >= {nb for nb, lesson in PLAN.items()
                                 if lesson.number <= 5 and lesson.label.isdigit()}
    for notebook in set(PLAN) - taught("One day"):
        assert f"Lesson {PLAN[notebook].label} " in prose, notebook


def test_the_second_morning_teaches_every_lesson_the_day_leaves_out():
    assert set(PLAN) - taught("One day") <= taught("Second morning")


def test_every_lesson_in_the_guide_has_objectives_and_sticking_points():
    objectives = GUIDE.split("## What each lesson is for", 1)[1].split("\n## ", 1)[0]
    stuck = GUIDE.split("## Where learners get stuck", 1)[1].split("\n## ", 1)[0]
    for lesson in PLAN.values():
        if any(lesson.notebook in taught(heading) for heading in PLANS):
            assert re.search(rf"^\| {lesson.label} · ", objectives, re.M), lesson.notebook
            if lesson.exercises:
                assert re.search(rf"^\| {lesson.label} \|", stuck, re.M), lesson.notebook


# -- the captures and faults the guide names -------------------------------------------------

WIRE_OF_CLIENT = {"anthropic.Anthropic": {"anthropic-messages"},
                  "openai.OpenAI": {"openai-responses", "openai-chat"},
                  "genai.Client": {"google-gemini"}}


def _corpus_by_key():
    from lesson_lib.capture.captures import corpus

    return {cap.key: cap for cap in corpus()}


def _wires_named(name: str) -> set[str]:
    return {key.split("/")[0] for key in _corpus_by_key() if key.split("/", 1)[1] == name}


def test_every_capture_the_guide_asks_for_exists_on_the_wire_it_is_asked_on():
    from lesson_lib import wires

    wire_of_path = {}
    for entry in wires.ENTRIES.values():
        query = "?" + "&".join(f"{k}={v}" for k, v in entry.query) if entry.query else ""
        wire_of_path |= {entry.route: entry.wire, entry.path: entry.wire,
                         entry.path + query: entry.wire}
    in_urls = re.findall(r"(/v1/[\w/.]+)\?capture=([\w/.-]+)", GUIDE)
    in_tables = re.findall(r"^\| [^|]+ \| `(/[^`]+)` \| `([\w/.-]+)` \|", GUIDE, re.M)
    assert in_urls and len(in_tables) == len(wires.ENTRIES)   # a row for every wire
    for path, name in in_urls + in_tables:
        assert wire_of_path[path] in _wires_named(name), f"{path}?capture={name}"
    # In prose: the client named before `extra_query` decides the wire.
    prose = list(re.finditer(r'"capture": "([\w/.-]+)"', GUIDE))
    assert prose
    for match in prose:
        before = GUIDE[:match.start()]
        client = max(WIRE_OF_CLIENT, key=before.rfind)
        assert _wires_named(match[1]) & WIRE_OF_CLIENT[client], f"{client}: {match[1]}"


def test_every_fault_the_guide_names_parses_and_applies():
    from lesson_lib.cli.serve import fault_spec

    specs = re.findall(r"fault=([\w:.-]+)", GUIDE)
    specs += re.findall(r"`((?:cut|drop|stall|error-after):\d+)`", GUIDE)
    assert {"cut", "drop", "error-after", "stall"} <= {s.split(":")[0] for s in specs}
    for spec in specs:
        fault_spec.parse(spec)
    for path, name, spec in re.findall(r"(/v1/[\w/.]+)\?capture=([\w/.-]+)&fault=([\w:.-]+)",
                                       GUIDE):
        cap = next(c for k, c in _corpus_by_key().items()
                   if c.name == name and k.split("/")[0] in path_wires(path))
        broken = fault_spec.apply(cap, fault_spec.parse_all([spec]))
        assert broken.body != cap.body, spec


def test_each_finished_looking_cut_leaves_the_whole_text_and_no_proper_end():
    from lesson_lib import wires
    from lesson_lib.breaks import faults
    from lesson_lib.turn.run import turn_state

    rows = re.findall(r"^\| [^|]+ \| `(/[^`]+)` \| `([\w/.-]+)` \| `cut:(\d+)` \(([^|]*)\) \|",
                      GUIDE, re.M)
    assert len(rows) == len(wires.ENTRIES)
    for path, name, offset, says in rows:
        cap = next(c for k, c in _corpus_by_key().items()
                   if c.name == name and k.split("/")[0] in path_wires(path))
        whole, cut = turn_state([cap]), turn_state([faults.cut_at(cap, int(offset))])
        assert cut.outcome == "truncated" and whole.outcome == "completed", name
        if "stops one record short" in says:      # Gemini's last record carries text too
            assert text_of(whole).startswith(text_of(cut)) and text_of(cut), name
            assert text_of(cut) != text_of(whole), name
        else:
            assert text_of(cut) == text_of(whole) != "", name


def path_wires(path: str) -> set[str]:
    from lesson_lib import wires

    found = set()
    for entry in wires.ENTRIES.values():
        query = "?" + "&".join(f"{k}={v}" for k, v in entry.query) if entry.query else ""
        if path in (entry.route, entry.path, entry.path + query):
            found.add(entry.wire)
    return found


def text_of(state) -> str:
    return "".join(block.text for block in state.blocks if block.kind == "text")


# -- the serve recipe: options, retries, exceptions, memory -----------------------------------


def test_every_serve_fault_option_the_guide_gives_starts_the_server():
    # `--fault stall` exits 2 ("needs a number"); the option is NAME:ARG.
    from lesson_lib.cli.serve.background import settings_for

    options = [o for o in re.findall(r"--fault[ =]([\w:.-]+)", GUIDE) if o != "NAME:ARG"]
    assert {"stall", "drop"} <= {o.split(":")[0] for o in options}
    for option in options:
        settings_for(faults=[option])           # StartError (exit 2) when it is bad


def test_every_sdk_client_in_the_guide_has_its_retries_off():
    # Inline in the prose, or a line of the recipes (`lesson_lib.course.recipes`).
    clients = re.findall(r"(anthropic\.Anthropic|openai\.OpenAI)\(([^`\n]*)\)", GUIDE)
    assert {name for name, _ in clients} == {"anthropic.Anthropic", "openai.OpenAI"}
    for name, args in clients:
        assert "max_retries=0" in args, f"{name}({args})"


def test_the_silent_wait_the_guide_quotes_is_the_sdks_default_retries():
    from anthropic._constants import DEFAULT_MAX_RETRIES

    found = re.search(r"on `([\w-]+)`, whose `retry-after` is (\d+) seconds, the\s+Anthropic "
                      r"client sits silent for (\d+) s", GUIDE)
    assert found, "the guide says how long a 429 waits without max_retries=0"
    name, after, silent = found[1], int(found[2]), int(found[3])
    cap = _corpus_by_key()[f"anthropic-messages/{name}"]
    assert cap.status == 429
    headers = {k.lower(): v for k, v in cap.sidecar["response"]["headers"].items()}
    assert float(headers["retry-after"]) == after and "retry-after-ms" not in headers
    assert silent == DEFAULT_MAX_RETRIES * after


def test_with_retries_off_the_429_raises_at_once_the_error_the_guide_names():
    import time

    import anthropic

    from lesson_lib.cli.serve import serving

    named = re.search(r"before it raises `(anthropic\.\w+)`", GUIDE)[1]
    with serving(speed="instant") as url:
        client = anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0)
        began = time.monotonic()
        with pytest.raises(anthropic.APIStatusError) as info:
            client.messages.create(model="claude-sonnet-4-6", max_tokens=10,
                                   messages=[{"role": "user", "content": "hi"}],
                                   extra_query={"capture": "http-429-rate-limited"})
    assert time.monotonic() - began < 5
    assert f"anthropic.{type(info.value).__name__}" == named


def _drop_row(client: str) -> str:
    row = re.search(rf"^\| `{client}` SDK[^|]*\|[^|]*\| (.*) \|$", GUIDE, re.M)
    assert row, client
    return row[1]


def _name(exc: BaseException) -> str:
    return f"{type(exc).__module__.split('.')[0]}.{type(exc).__name__}"


def test_the_exceptions_the_guide_names_for_a_drop_are_what_the_pinned_sdks_raise():
    import anthropic
    import openai

    from lesson_lib.cli.serve import serving

    with serving(speed="instant") as url:
        client = anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0)
        with pytest.raises(Exception) as raised:
            with client.messages.stream(model="claude-sonnet-4-6", max_tokens=10,
                                        messages=[{"role": "user", "content": "hi"}],
                                        extra_query={"capture": "text-then-tool",
                                                     "fault": "drop:2400"}) as stream:
                for _ in stream:
                    pass
        said = re.match(r"`([\w.]+)` while iterating", _drop_row("anthropic"))
        assert said and said[1] == _name(raised.value), _drop_row("anthropic")

        client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        with pytest.raises(Exception) as raised:
            for _ in client.responses.create(model="gpt-5", input="hi", stream=True,
                                             extra_query={"capture": "text",
                                                          "fault": "drop:3000"}):
                pass
        said = re.match(r"`([\w.]+)` while iterating, caused by `([\w.]+)`",
                        _drop_row("openai"))
        assert said, _drop_row("openai")
        assert said[1] == _name(raised.value)
        assert said[2] == _name(raised.value.__cause__)


def test_the_memory_per_learner_adds_up():
    found = re.search(r"kernel holds\s+(\d+) to (\d+) MB once the lesson has run, JupyterLab "
                      r"(\d+) MB, `lesson-lib serve` (\d+) MB\.\s+Plan about (\d+) MB per learner "
                      r"with one kernel open.*?so about ([\d.]+) GB for thirty", GUIDE, re.S)
    assert found, "the guide says how much memory a learner needs"
    low, high, lab, serve, per, thirty = (float(n) for n in found.groups())
    assert low < high and abs(per - (high + lab)) <= 5
    assert round(per * 30 / 1000, 1) == float(thirty)
