"""A new provider is one more adapter: DeepSeek's Chat dialect reduces correctly through
its own adapter, registered as data, with the reducer and every view untouched."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from source_ast import parse as parse_source

from lesson_lib.capture.captures import from_bytes, reference_dir
from lesson_lib.turn import adapters
from lesson_lib.turn.adapters import DIALECTS, ChatAdapter, Dialect, adapter_for, dialect_of
from lesson_lib.turn.events import Usage
from lesson_lib.turn.run import turn_state
from lesson_lib.views import render_turn, turn_text

PACKAGE = Path(adapters.__file__).resolve().parents[2]
DEEPSEEK = reference_dir() / "openai-chat-compatible" / "deepseek-reasoning-content.sse"
needs_ref = pytest.mark.skipif(not DEEPSEEK.exists(), reason=f"reference capture absent: {DEEPSEEK}")


def deepseek(body: bytes | None = None):
    body = DEEPSEEK.read_bytes() if body is None else body
    return from_bytes(body, name="deepseek-reasoning-content", sidecar={"wire": "openai-chat"})


@needs_ref
def test_the_deepseek_stream_is_known_by_its_model_and_reduces_correctly():
    cap = deepseek()
    assert dialect_of(cap) == "deepseek"
    state = turn_state(cap, "auto")
    assert state.outcome == "completed"
    reasoning, text = state.blocks
    assert (reasoning.kind, reasoning.channel, text.kind) == ("reasoning", "reasoning", "text")
    assert reasoning.text.startswith('Hmm, the user just said "Hello".')
    assert text.text == "Hello there! 😊 How can I help you today?"
    assert reasoning.complete and text.complete
    step = state.steps[0]
    assert (step.model, step.finish.reason, step.usage.reasoning, step.usage.input) == \
        ("deepseek-reasoner", "stop", 198, 6)
    html = render_turn(state)
    assert "How can I help you today?" in html and "reasoning" in turn_text(state)


@needs_ref
def test_its_cache_hits_are_read_from_its_own_field():
    body = DEEPSEEK.read_bytes()
    only_deepseek = (body.replace(b'"prompt_tokens_details":{"cached_tokens":0},', b"")
                     .replace(b'"prompt_cache_hit_tokens":0', b'"prompt_cache_hit_tokens":4'))
    assert only_deepseek != body
    cap = deepseek(only_deepseek)
    assert turn_state(cap, "auto").steps[0].usage.cache_read == 4
    # The plain Chat adapter does not know the field: that is what the dialect adds.
    raw = {"prompt_tokens": 6, "completion_tokens": 212, "prompt_cache_hit_tokens": 4}
    assert adapter_for("openai-chat").step_usage(raw).cache_read == 0
    assert adapter_for("openai-chat", dialect="deepseek").step_usage(raw).cache_read == 4


def test_a_dialect_of_another_wire_is_refused():
    with pytest.raises(ValueError):
        adapter_for("anthropic-messages", dialect="deepseek")


@needs_ref
def test_a_new_dialect_is_one_more_entry_in_the_registry(monkeypatch):
    class Doubled(ChatAdapter):
        """A made-up server that counts every output token twice."""

        def step_usage(self, raw):
            u = super().step_usage(raw)
            return Usage(u.input, u.output * 2, u.cache_read, u.cache_write, u.reasoning, raw)

    monkeypatch.setitem(DIALECTS, "doubled", Dialect("openai-chat", Doubled, ("doubled-",)))
    cap = deepseek(DEEPSEEK.read_bytes().replace(b'"model":"deepseek-reasoner"',
                                                  b'"model":"doubled-1"'))
    assert dialect_of(cap) == "doubled"
    state = turn_state(cap, "auto")
    assert state.steps[0].usage.output == 424
    assert "<td>424</td>" in render_turn(state)


def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_the_reducer_and_the_views_know_no_adapter_and_no_dialect():
    files = [PACKAGE / "turn" / "reduce.py", *sorted((PACKAGE / "views").glob("*.py"))]
    names = {d.lower() for d in DIALECTS} | {"deepseek", "openai-chat-compatible"}
    for path in files:
        text = _source(path)
        assert not any(n in text.lower() for n in names), path
        for node in ast.walk(parse_source(text)):
            if isinstance(node, ast.ImportFrom):
                assert "adapters" not in (node.module or ""), (path, node.module)
    registry = parse_source(_source(PACKAGE / "turn" / "adapters" / "__init__.py"))
    assigned = {t.id for n in ast.walk(registry) if isinstance(n, ast.AnnAssign)
                for t in [n.target] if isinstance(t, ast.Name)}
    assert {"ADAPTERS", "DIALECTS"} <= assigned       # the registry is data
