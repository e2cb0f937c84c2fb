"""Anthropic captures of cited answers: document citations and a web search.

Cited text arrives as separate text blocks that open with ``"citations": []``
and receive one ``citations_delta`` per citation before their text. A server
tool (web_search) streams its query like a tool call, and its result block
arrives whole in one start event.
"""

from __future__ import annotations

from typing import Any

from .anthropic_requests import (
    MUSEUM_GUIDE,
    MUSEUM_SEARCH_RESULTS,
    MUSEUM_TITLE,
    WEB_SEARCH_TOOL,
    char_citation,
    request,
    user,
)
from .anthropic_writer import HELPER, AnthropicWriter, Scenario, token_estimate


def citations(w: AnthropicWriter, rid: str) -> Scenario:
    """Cited text blocks: citations_delta events on blocks that start with citations []."""
    parts: list[tuple[str, list[dict[str, Any]]]] = [
        ("According to the visitor guide, ", []),
        ("the museum opens at 10:00, and on Thursdays the galleries stay open until 21:45",
         [char_citation("The Musée des Ondes is open", "18:00."),
          char_citation("On Thursdays", "21:45.")]),
        (". As for the price, ", []),
        ("adults pay €12 and visitors under 18 get in free",
         [char_citation("Admission is €12", "under 18.")]),
        (", so the two of you would pay €12 in total.", []),
    ]
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=612)
    for index, (text, cites) in enumerate(parts):
        if cites:
            w.cited_text_block(index, text, cites)
        else:
            w.text_block(index, text, ping_probability=0.3 if index == 0 else 0.0)
    full = "".join(text for text, _ in parts)
    w.message_delta(stop_reason="end_turn", output_tokens=token_estimate(full) + 40)
    w.message_stop()
    question = ("When can I visit on a Thursday, and how much will it cost for me and my "
                "15-year-old?")
    document = {"type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": MUSEUM_GUIDE},
                "title": MUSEUM_TITLE, "citations": {"enabled": True}}
    return Scenario(
        demonstrates="Document citations: cited text blocks start with \"citations\": [] "
                     "and receive citations_delta events before their text.",
        request=request("claude-sonnet-4-6",
                        [user([document, {"type": "text", "text": question}])]),
        based_on=("The cited-text pattern of recorded web-search streams (pydantic-ai): "
                  "separate text blocks, the cited ones opening with \"citations\": [] "
                  "first, one citations_delta per citation, then text_delta. Differs: "
                  "char_location citations of a plain-text document (documented shape), "
                  "whose indexes point into the request's document; older payload layout."),
        sdk={"helper": HELPER, "raises": None, "text": full,
             "final": {"stop_reason": "end_turn", "content.1.citations.1.start_char_index":
                       parts[1][1][1]["start_char_index"],
                       "content.1.citations.1.cited_text": parts[1][1][1]["cited_text"],
                       "content.3.citations.0.document_title": MUSEUM_TITLE,
                       "content.0.citations": None},
             "note": "returns each cited block with its citations list; the text "
                     "projection loses which words were cited"},
    )


def web_search(w: AnthropicWriter, rid: str) -> Scenario:
    """A server tool: web_search call, its result whole, then cited text blocks."""
    search_id = w.server_tool_id()
    query = {"query": "Musée des Ondes late opening this week"}
    results = [dict(r, type="web_search_result", encrypted_content=w.opaque(300))
               for r in MUSEUM_SEARCH_RESULTS]
    results = [{k: r[k] for k in ("type", "title", "url", "encrypted_content", "page_age")}
               for r in results]

    def cite(result: dict[str, Any], cited_text: str) -> dict[str, Any]:
        return {"type": "web_search_result_location", "cited_text": cited_text,
                "url": result["url"], "title": result["title"],
                "encrypted_index": w.opaque(100)}

    intro = "I'll check this week's opening hours."
    parts: list[tuple[str, list[dict[str, Any]]]] = [
        ("Yes. ", []),
        ("Every Thursday the galleries stay open until 21:45, with a guided tour of the "
         "telegraph room at 19:30",
         [cite(results[1], "Late Thursdays: the galleries stay open until 21:45. Guided "
                           "tour of the telegraph room at 19:30 (free with admission)."),
          cite(results[0], "Tuesday–Sunday 10:00–18:00, Thursdays until 21:45. Closed "
                           "on Mondays and 1 May.")]),
        (". ", []),
        ("Entry after 18:00 costs €8", [cite(results[2], "Musée des Ondes (7e): Thursdays "
                                                         "until 21:45, €8 after 18:00.")]),
        ("; on the other days it closes at 18:00.", []),
    ]
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=2231)
    w.text_block(0, intro, ping_probability=1.0)
    w.tool_use_block(1, search_id, "web_search", query, server=True, caller=False)
    w.block_start(2, {"type": "web_search_tool_result", "tool_use_id": search_id,
                      "content": results}, after_ms=w.pause((900.0, 2400.0)))
    w.block_stop(2)
    w.block_start(3, {"type": "text", "text": ""})
    w.block_stop(3)
    for index, (text, cites) in enumerate(parts, start=4):
        if cites:
            w.cited_text_block(index, text, cites)
        else:
            w.text_block(index, text)
    answer = "".join(text for text, _ in parts)
    w.message_delta(stop_reason="end_turn", input_tokens=9874,
                    output_tokens=token_estimate(intro + answer) + 96,
                    server_tool_use={"web_search_requests": 1, "web_fetch_requests": 0})
    w.message_stop()
    return Scenario(
        demonstrates="A server tool: server_tool_use with input fragments, its "
                     "web_search_tool_result whole in one start event, then cited text.",
        request=request("claude-sonnet-4-6", [user(
            "Is the Musée des Ondes open late any evening this week?")],
            tools=[WEB_SEARCH_TOOL]),
        based_on=("pydantic-ai's recorded web-search stream: server_tool_use with "
                  "input_json_delta, web_search_tool_result arriving whole, an empty text "
                  "block, cited text blocks with web_search_result_location citations, "
                  "server_tool_use counts in message_delta usage. Differs: one search "
                  "instead of two; the sites are fictional (.example domains)."),
        sdk={"helper": HELPER, "raises": None, "text": intro + answer,
             "final": {"stop_reason": "end_turn", "content.1.type": "server_tool_use",
                       "content.1.input": query, "content.2.type": "web_search_tool_result",
                       "content.2.content.2.url": results[2]["url"],
                       "content.5.citations.0.url": results[1]["url"],
                       "usage.server_tool_use.web_search_requests": 1},
             "note": "returns the search call, its results and the cited text as blocks; "
                     "the text projection prints only the prose"},
    )


CAPTURES = {"citations": citations, "web-search": web_search}
