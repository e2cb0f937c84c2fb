"""Anthropic captures of the newer wire features no public recording shows whole.

A ``fallback`` block where one model's output gives way to another's, a
file the code-execution container received (``container_upload``) in a
stream that stops with ``pause_turn``, an MCP server's tool listing
(``mcp_tool_listing``) in a stream that stops because the context window is
full, a ``compaction`` stop after a streamed summary, and a stop sequence.
A whole tool call before a ``fallback`` block, which the SDK's eager tool runner does not
start. Each is built from the SDK's type definitions (anthropic 2.16 and 2.17,
``anthropic.types.beta``) and the vendor's documentation; its sidecar says
so. The streams keep the messiness of the recordings: padding, pings, the
current payload layout, ``usage.iterations`` as real streams send it.
"""

from __future__ import annotations

from typing import Any

from .anthropic_requests import request, user
from .anthropic_writer import HELPER, AnthropicWriter, Scenario, token_estimate

CODE_EXECUTION_TOOL = {"type": "code_execution_20250825", "name": "code_execution"}
MCP_SERVER = {"type": "url", "url": "https://tides.example/mcp", "name": "tides"}


def iteration(kind: str, input_tokens: int, output_tokens: int, *, model: str | None = None,
              cache_read: int = 0) -> dict[str, Any]:
    """One ``usage.iterations`` entry in the recorded layout (model only where named)."""
    out: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": output_tokens,
                           "cache_read_input_tokens": cache_read,
                           "cache_creation_input_tokens": 0,
                           "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                              "ephemeral_1h_input_tokens": 0},
                           "type": kind}
    if model is not None:
        out["model"] = model
    return out


def fallback_after_refusal(w: AnthropicWriter, rid: str) -> Scenario:
    """The requested model declines mid-answer; a fallback model's output follows a
    ``fallback`` block, and ``usage.iterations`` counts each hop."""
    first = "Port scanners work by sending probes to"
    second = ("Here is a short overview of how port scanning works, for auditing your own "
              "network: a scanner sends a connection attempt to each port of a host and "
              "reads the reply. An open port answers, a closed one refuses, and a filtered "
              "one stays silent. Run scans only against machines you are allowed to test.")
    frm, to = "claude-opus-4-6", "claude-sonnet-4-6"
    w.message_start(model=frm, message_id=w.message_id(), input_tokens=41)
    w.text_block(0, first, ping_probability=1.0)
    w.block_start(1, {"type": "fallback", "from": {"model": frm}, "to": {"model": to},
                      "trigger": {"type": "refusal", "category": "cyber"}},
                  after_ms=w.pause((120.0, 380.0)))
    w.block_stop(1)
    w.maybe_ping(1.0)
    w.text_block(2, second)
    spent = token_estimate(first)
    total = spent + token_estimate(second)
    hops = [iteration("message", 41, spent, model=frm),
            iteration("fallback_message", 58, total - spent, model=to)]
    w.message_delta(stop_reason="end_turn", input_tokens=41, output_tokens=total,
                    iterations=hops)
    w.message_stop()
    return Scenario(
        demonstrates="A server-side fallback: the requested model's partial text, a fallback "
                     "block (a start and a stop, no deltas) naming both models, the fallback "
                     "model's answer, and usage.iterations with one entry per hop.",
        request=request(frm, [user("How do port scanners work? Keep it short.")],
                        fallbacks=[{"model": to}],
                        betas=["server-side-fallback-2026-07-01"]),
        based_on=("The SDK's BetaFallbackBlock (from, to, trigger; 'treated like a server-tool "
                  "content block for streaming: a content_block_start / content_block_stop "
                  "pair and no deltas'), BetaFallbackRefusalTrigger and "
                  "BetaFallbackMessageIterationUsage (the serving hop's usage entry), and the "
                  "beta stream helper, which relabels the message's model with the block's "
                  "`to.model`. No recording was available; the texts are illustrative."),
        sdk={"helper": HELPER, "raises": None, "text": first + second,
             "final": {"stop_reason": "end_turn", "model": frm,
                       "content.1.type": "fallback", "content.1.to.model": to},
             "note": "the stable helper keeps the block but not the seam's meaning: its model "
                     "stays the requested one, where the beta helper and the bytes say the "
                     "fallback model served the answer, and it drops usage.iterations (the "
                     "usage per hop)"},
    )


SCAN_TOOL = {
    "name": "scan_ports",
    "description": "Scan a host's TCP ports and say which are open.",
    "input_schema": {"type": "object", "properties": {
        "host": {"type": "string", "description": "A hostname or IP address"},
        "ports": {"type": "string", "description": "A range, e.g. 1-1024"}},
        "required": ["host", "ports"]},
}
AUDIT_SCOPE_TOOL = {
    "name": "list_audit_scope",
    "description": "List the hosts the user is authorised to audit.",
    "input_schema": {"type": "object", "properties": {}},
}


def fallback_after_tool_call(w: AnthropicWriter, rid: str) -> Scenario:
    """The requested model writes a whole tool call, then declines: a ``fallback`` block
    hands the reply to another model, which asks for a different tool. The first call's
    arguments settled before the seam, so a rule that starts a call when its arguments
    settle runs a call the rest of the reply replaced; the SDK's eager rule does not."""
    intro = "I'll scan the host for open ports."
    frm, to = "claude-opus-4-6", "claude-sonnet-4-6"
    w.message_start(model=frm, message_id=w.message_id(), input_tokens=512)
    w.text_block(0, intro, ping_probability=1.0)
    scan = {"host": "203.0.113.7", "ports": "1-1024"}
    w.tool_use_block(1, w.tool_id(), SCAN_TOOL["name"], scan)
    w.block_start(2, {"type": "fallback", "from": {"model": frm}, "to": {"model": to},
                      "trigger": {"type": "refusal", "category": "cyber"}},
                  after_ms=w.pause((120.0, 380.0)))
    w.block_stop(2)
    w.maybe_ping(1.0)
    second = "Before scanning anything, I'll check which hosts you are authorised to audit."
    w.text_block(3, second)
    w.tool_use_block(4, w.tool_id(), AUDIT_SCOPE_TOOL["name"], {})
    spent = token_estimate(intro + str(scan)) + 12
    total = spent + token_estimate(second) + 8
    hops = [iteration("message", 512, spent, model=frm),
            iteration("fallback_message", 540, total - spent, model=to)]
    w.message_delta(stop_reason="tool_use", input_tokens=512, output_tokens=total,
                    iterations=hops)
    w.message_stop()
    return Scenario(
        demonstrates="A fallback after a whole tool call: the requested model's text and a "
                     "complete scan_ports call, a fallback block (refusal), then the fallback "
                     "model's text and its own list_audit_scope call, stop_reason tool_use. "
                     "The first call's arguments settled, but the reply that follows replaced "
                     "it: the anthropic SDK's run_tools_eagerly starts no call across a "
                     "fallback block.",
        request=request(frm, [user("Scan 203.0.113.7 for open ports.")],
                        tools=[SCAN_TOOL, AUDIT_SCOPE_TOOL], fallbacks=[{"model": to}],
                        betas=["server-side-fallback-2026-07-01"]),
        based_on=("The SDK's BetaFallbackBlock and BetaFallbackRefusalTrigger, and its tool "
                  "runner's eager rule (lib/tools/_beta_runner.py, EagerToolCalls.track: a "
                  "refusal that leads to a fallback may have cut off the call before it, and "
                  "after a fallback block no call runs until the reply ends). No recording "
                  "was available; the texts and the calls are illustrative."),
        sdk={"helper": HELPER, "raises": None, "text": intro + second,
             "final": {"stop_reason": "tool_use", "content.2.type": "fallback",
                       "content.1.name": SCAN_TOOL["name"],
                       "content.4.name": AUDIT_SCOPE_TOOL["name"]},
             "note": "the stable helper keeps both calls: an application that runs every "
                     "tool_use block of the final message runs the call the fallback "
                     "replaced"},
    )


def code_execution_pause(w: AnthropicWriter, rid: str) -> Scenario:
    """A file reaches the container (``container_upload``), code runs on it, and the turn
    pauses (``pause_turn``) with the container named in ``message_delta``."""
    intro = "I'll load the CSV you attached and count the rows per station."
    code = "import pandas as pd\ndf = pd.read_csv('tides.csv')\nprint(df.groupby('station').size())"
    stdout = "station\nBrest        744\nCherbourg    744\nSaint-Malo   743\ndtype: int64\n"
    container = {"id": "container_011CZ" + w.ident("", 20),
                 "expires_at": "2026-05-02T10:41:27.339190Z"}
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=2210)
    w.block_start(0, {"type": "container_upload", "file_id": "file_011CZ" + w.ident("", 20)})
    w.block_stop(0)
    w.text_block(1, intro, ping_probability=0.6)
    sid = w.server_tool_id()
    w.tool_use_block(2, sid, "bash_code_execution", {"command": (
        f"python3 - <<'EOF'\n{code}\nEOF")}, server=True, caller=False)
    w.block_start(3, {"type": "bash_code_execution_tool_result", "tool_use_id": sid,
                      "content": {"type": "bash_code_execution_result", "stdout": stdout,
                                  "stderr": "", "return_code": 0, "content": []}},
                  after_ms=w.pause((900.0, 2400.0)))
    w.block_stop(3)
    out = token_estimate(intro + code) + 12
    w.message_delta(stop_reason="pause_turn", input_tokens=2210, output_tokens=out,
                    server_tool_use={"web_search_requests": 0, "web_fetch_requests": 0},
                    container=container)
    w.message_stop()
    return Scenario(
        demonstrates="A container_upload block (whole in its start, no deltas), a server "
                     "bash_code_execution call and its result, then stop_reason pause_turn "
                     "with the container in message_delta: the server paused a long turn.",
        request=request("claude-sonnet-4-6", [user([
            {"type": "text", "text": "How many readings does each station have?"},
            {"type": "container_upload", "file_id": "file_011CZ…"}])],
            tools=[CODE_EXECUTION_TOOL], betas=["files-api-2025-04-14"]),
        based_on=("The SDK's ContainerUploadBlock (file_id), the recorded code-execution "
                  "streams in the reference set (server_tool_use bash_code_execution, its "
                  "result whole in the start event, the container in message_delta) and the "
                  "recorded pause_turn stream. Differs: no recording shows a container_upload "
                  "block; the data and counts are illustrative."),
        sdk={"helper": HELPER, "raises": None, "text": intro,
             "final": {"stop_reason": "pause_turn", "content.0.type": "container_upload",
                       "content.3.content.return_code": 0},
             "note": "returns the paused message; only stop_reason says the turn is not over "
                     "(send it back to let the server continue)"},
    )


def mcp_listing_window_full(w: AnthropicWriter, rid: str) -> Scenario:
    """An MCP server's tool listing, an MCP call and its result, then the context window
    fills up mid-answer (``model_context_window_exceeded``)."""
    listing = {"type": "mcp_tool_listing", "mcp_server_name": "tides", "tools": [
        {"name": "high_tides", "description": "High tides for a port on a date.",
         "input_schema": {"type": "object", "properties": {
             "port": {"type": "string"}, "date": {"type": "string", "format": "date"}},
             "required": ["port", "date"]}}]}
    call_id = w.ident("mcptoolu_01", 22)
    text = ("High tides at Saint-Malo on 9 May: 05:12 (11.9 m) and 17:38 (12.3 m). The "
            "evening tide is one of the biggest of the month, so the causeway to Grand Bé "
            "closes about")
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=19_410,
                    cache_read=180_000)
    w.block_start(0, listing)
    w.block_stop(0)
    w.block_start(1, {"type": "mcp_tool_use", "id": call_id, "name": "high_tides",
                      "server_name": "tides", "input": {}})
    w.input_json(1, w.argument_fragments({"port": "Saint-Malo", "date": "2026-05-09"}))
    w.block_stop(1)
    w.block_start(2, {"type": "mcp_tool_result", "tool_use_id": call_id, "is_error": False,
                      "content": [{"type": "text", "text": "05:12 11.9 m; 17:38 12.3 m"}]},
                  after_ms=w.pause((600.0, 1500.0)))
    w.block_stop(2)
    w.text_block(3, text)
    w.message_delta(stop_reason="model_context_window_exceeded", input_tokens=19_410,
                    cache_read=180_000, output_tokens=590)
    w.message_stop()
    return Scenario(
        demonstrates="An MCP server's tool listing (mcp_tool_listing, whole in its start), an "
                     "mcp_tool_use call and its mcp_tool_result, then stop_reason "
                     "model_context_window_exceeded mid-sentence: a length stop that only a "
                     "shorter input cures.",
        request=request("claude-sonnet-4-6", [user(
            "When are the high tides at Saint-Malo on 9 May?")], max_tokens=8192,
            mcp_servers=[MCP_SERVER], betas=["mcp-client-2025-11-20"]),
        based_on=("The SDK's BetaMCPToolListingBlock (mcp_server_name, tools with name, "
                  "description, input_schema), the recorded MCP-connector stream in the "
                  "reference set (mcp_tool_use with input deltas, mcp_tool_result whole) and "
                  "the stop reason model_context_window_exceeded of the SDK's StopReason. "
                  "Differs: no recording shows either; the tides are illustrative."),
        sdk={"helper": HELPER, "raises": None, "text": text,
             "final": {"stop_reason": "model_context_window_exceeded",
                       "content.0.type": "mcp_tool_listing",
                       "content.0.tools.0.name": "high_tides",
                       "content.1.input": {}},
             "note": "returns normally: only stop_reason says the answer was cut short "
                     "because the context window was full; the stable helper does not "
                     "apply the mcp_tool_use block's input deltas (its input stays {})"},
    )


def compaction_stop(w: AnthropicWriter, rid: str) -> Scenario:
    """The server compacts the context and pauses after the summary (``compaction`` stop)."""
    summary = ("The user is planning a week of hut-to-hut hiking in the Alps from 6 to 13 "
               "July: Chamonix to Zermatt on the Walker's Haute Route, huts booked for "
               "nights 1-4, nights 5-6 still open. Decided: no glacier crossings, rain "
               "gear, trekking poles.\n\nNext step: suggest huts for nights 5 and 6.")
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=80,
                    cache_read=151_220, output_tokens=4)
    w.block_start(0, {"type": "compaction", "content": None})
    w.ping()
    w.delta(0, {"type": "compaction_delta", "content": summary, "encrypted_content": None},
            w.pause((2500.0, 6000.0)))
    w.block_stop(0)
    out = token_estimate(summary)
    w.message_delta(stop_reason="compaction", input_tokens=80, cache_read=151_220,
                    output_tokens=out, iterations=[iteration("compaction", 80, out,
                                                             cache_read=151_220)])
    w.message_stop()
    return Scenario(
        demonstrates="A compaction stop: the compaction block's summary in one "
                     "compaction_delta, then stop_reason compaction: the server paused after "
                     "compacting, and the next request continues from the summary.",
        request=request("claude-sonnet-4-6", [user("…a long planning conversation…")],
                        context_management={"edits": [{"type": "compact_20260112",
                                                       "pause_after_compaction": True}]},
                        betas=["compact-2026-01-12"]),
        based_on=("The recorded compaction stream in the reference set (a compaction block "
                  "starting with content null, one compaction_delta with the summary, a "
                  "compaction entry in usage.iterations) and the SDK's BetaStopReason "
                  "'compaction'. Differs: the recording goes on to answer; this one pauses "
                  "after compacting, as pause_after_compaction asks."),
        sdk={"helper": HELPER, "raises": None, "text": "",
             "final": {"stop_reason": "compaction", "content.0.type": "compaction",
                       "content.0.content": None},
             "note": "the stable helper keeps the compaction block but not its summary "
                     "(compaction_delta is a beta delta it does not apply), and drops "
                     "usage.iterations"},
    )


def stop_sequence(w: AnthropicWriter, rid: str) -> Scenario:
    """The text stops before a stop sequence, which ``message_delta`` names."""
    text = "Tide table, Saint-Malo, 9 May\n\n| time | height |\n|---|---|\n| 05:12 | 11.9 m |\n"
    w.message_start(model="claude-haiku-4-5", message_id=w.message_id(), input_tokens=64)
    w.text_block(0, text, ping_probability=0.5)
    w.message_delta(stop_reason="stop_sequence", stop_sequence="| 17:", input_tokens=64,
                    output_tokens=token_estimate(text))
    w.message_stop()
    return Scenario(
        demonstrates="A stop sequence: the text stops just before it, and message_delta "
                     "names it (stop_reason stop_sequence, stop_sequence \"| 17:\").",
        request=request("claude-haiku-4-5", [user(
            "Give me Saint-Malo's morning tide on 9 May as a Markdown table.")],
            stop_sequences=["| 17:"]),
        based_on=("The recorded stop-sequence stream in the reference set (the text ends "
                  "before the sequence; message_delta carries stop_reason stop_sequence and "
                  "the sequence), in the current payload layout."),
        sdk={"helper": HELPER, "raises": None, "text": text,
             "final": {"stop_reason": "stop_sequence", "stop_sequence": "| 17:",
                       "content.0.text": text},
             "note": "returns the text without the sequence; stop_sequence names it"},
    )


CAPTURES = {
    "fallback-after-refusal": fallback_after_refusal,
    "fallback-after-tool-call": fallback_after_tool_call,
    "code-execution-pause": code_execution_pause,
    "mcp-listing-window-full": mcp_listing_window_full,
    "compaction-stop": compaction_stop,
    "stop-sequence": stop_sequence,
}
