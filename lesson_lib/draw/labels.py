"""What a tool call says while it works: one label per known tool, a generic one otherwise."""

from __future__ import annotations

TOOL_LABELS: dict[str, str] = {
    "get_weather": "Checking the weather…",
    "web_search": "Searching the web…",
    "web_fetch": "Fetching a page…",
    "code_execution": "Running code…",
    "bash_code_execution": "Running a command…",
    "text_editor_code_execution": "Editing a file…",
    "write_file": "Writing a file…",
    "file_search": "Searching files…",
    "code_interpreter": "Running code…",
    "image_generation": "Drawing an image…",
}


def tool_label(name: str | None, server_side: bool = False) -> str:
    """The words drawn the moment a call's block starts, before any argument arrived."""
    if name in TOOL_LABELS:
        return TOOL_LABELS[name]
    return "Running a tool at the provider…" if server_side else "Calling a tool…"
