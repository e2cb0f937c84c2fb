"""What the constructed Anthropic captures were asked: tools, requests, documents.

The tool definitions carry full JSON schemas, as a request would send them.
`WEATHER_TOOL` is the documentation's single-parameter ``get_weather``; the
weather turn uses the wire-neutral definition in `weather_turn` instead
(see `anthropic_turn`).
"""

from __future__ import annotations

import math
from typing import Any

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "input_schema": {
        "type": "object",
        "properties": {
            "location": {"type": "string",
                         "description": "The city and state, e.g. San Francisco, CA"},
        },
        "required": ["location"],
    },
}

FLIGHTS_TOOL = {
    "name": "search_flights",
    "description": "Search round-trip flights between two airports or metropolitan areas.",
    "input_schema": {
        "type": "object",
        "properties": {
            "origin": {"type": "string", "description": "IATA airport or city code"},
            "destination": {"type": "string", "description": "IATA airport or city code"},
            "depart_date": {"type": "string", "format": "date"},
            "return_date": {"type": "string", "format": "date"},
            "adults": {"type": "integer", "minimum": 1, "maximum": 9},
            "cabin": {"type": "string",
                      "enum": ["economy", "premium_economy", "business", "first"]},
        },
        "required": ["origin", "destination", "depart_date", "adults"],
    },
}

CLOCK_TOOL = {
    "name": "get_current_time",
    "description": "Get the current date and time in the user's time zone.",
    "input_schema": {"type": "object", "properties": {}},
}

CALENDAR_TOOL = {
    "name": "create_event",
    "description": "Add an event to the user's calendar.",
    "input_schema": {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "start": {"type": "string", "format": "date-time",
                      "description": "ISO 8601 with UTC offset"},
            "duration_minutes": {"type": "integer", "minimum": 1},
            "location": {"type": "string"},
        },
        "required": ["title", "start"],
    },
}

CHECKLIST_TOOL = {
    "name": "create_checklist",
    "description": "Save a checklist the user can tick off on their phone.",
    "input_schema": {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "items": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        },
        "required": ["title", "items"],
    },
}

WRITE_FILE_TOOL = {
    "name": "write_file",
    "description": "Create or overwrite a text file in the user's project.",
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path relative to the project root"},
            "content": {"type": "string", "description": "The complete file content"},
        },
        "required": ["path", "content"],
    },
}

WEB_SEARCH_TOOL = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}


def request(model: str, messages: list[dict[str, Any]], *, max_tokens: int = 1024,
            tools: list[dict[str, Any]] | None = None, **parameters: Any) -> dict[str, Any]:
    """The sidecar's ``request``: model, max_tokens, messages, tools, parameters."""
    out: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    if tools:
        out["tools"] = tools
    out["parameters"] = {"stream": True, **parameters}
    return out


def user(content: Any) -> dict[str, Any]:
    """A user message."""
    return {"role": "user", "content": content}


# -- the museum: a document to cite and a site to search ----------------------

MUSEUM_TITLE = "Musée des Ondes — visitor information"

MUSEUM_GUIDE = (
    "The Musée des Ondes is open Tuesday to Sunday, from 10:00 to 18:00. "
    "It is closed on Mondays and on 1 May. "
    "On Thursdays the galleries stay open until 21:45. "
    "Admission is €12 for adults and free for visitors under 18. "
    "The telegraph room on the first floor has a working Morse key that visitors may try. "
    "Photography without flash is allowed everywhere except in the manuscripts gallery."
)


def char_citation(sentence_start: str, sentence_end: str) -> dict[str, Any]:
    """A ``char_location`` citation of the guide: the sentence(s) from one text to another.

    The indices are computed from the document, so `cited_text` is exactly
    ``MUSEUM_GUIDE[start_char_index:end_char_index]``.
    """
    start = MUSEUM_GUIDE.index(sentence_start)
    end = MUSEUM_GUIDE.index(sentence_end, start) + len(sentence_end)
    while end < len(MUSEUM_GUIDE) and MUSEUM_GUIDE[end] == " ":
        end += 1   # cited_text keeps the space after the sentence, as recorded
    return {"type": "char_location", "cited_text": MUSEUM_GUIDE[start:end],
            "document_index": 0, "document_title": MUSEUM_TITLE,
            "start_char_index": start, "end_char_index": end, "file_id": None}


MUSEUM_SEARCH_RESULTS = (
    {"title": "Visit — Musée des Ondes",
     "url": "https://www.musee-des-ondes.example/en/visit", "page_age": "3 days ago"},
    {"title": "Late Thursdays: evening programme | Musée des Ondes",
     "url": "https://www.musee-des-ondes.example/en/whats-on/late-thursdays",
     "page_age": "1 week ago"},
    {"title": "Paris museums open late: the weekly guide",
     "url": "https://www.paris-culture-guide.example/late-openings",
     "page_age": "April 28, 2026"},
)


# -- the file the write_file tool writes ----------------------------------------

# (city, country, annual mean °C, half the yearly swing, rain mm/month, southern)
_CITIES = (
    ("Paris", "France", 12.3, 8.0, 52, False), ("Tokyo", "Japan", 15.8, 10.6, 128, False),
    ("Montréal", "Canada", 6.8, 16.0, 83, False), ("São Paulo", "Brazil", 19.2, 3.3, 121, True),
    ("Zürich", "Switzerland", 9.3, 9.0, 90, False), ("Reykjavík", "Iceland", 4.7, 5.6, 70, False),
    ("Cairo", "Egypt", 22.3, 7.3, 2, False), ("Nairobi", "Kenya", 18.0, 1.6, 78, True),
    ("Sydney", "Australia", 18.4, 5.4, 101, True), ("Québec", "Canada", 4.6, 16.2, 100, False),
    ("Lima", "Peru", 19.4, 3.8, 1, True), ("Kraków", "Poland", 8.7, 10.4, 56, False),
    ("İzmir", "Türkiye", 18.0, 9.2, 58, False), ("Córdoba", "Spain", 18.6, 9.6, 45, False),
    ("Mumbai", "India", 27.2, 2.3, 190, False), ("Singapore", "Singapore", 27.6, 0.8, 210, False),
    ("Cape Town", "South Africa", 16.9, 4.3, 43, True), ("Oslo", "Norway", 6.3, 10.5, 66, False),
    ("Mexico City", "Mexico", 16.8, 2.9, 53, False), ("Ushuaia", "Argentina", 6.0, 4.5, 48, True),
    ("Tromsø", "Norway", 3.1, 7.6, 85, False),
)

_MODULE_HEAD = '''"""Monthly climate normals for a few cities around the world.

Illustrative values shaped like 1991–2020 normals, not measurements: "mean_c"
is the average temperature in °C, "rain_mm" the precipitation in millimetres.
Use `normal(city, month)` to look one up.
"""

from __future__ import annotations

CLIMATE = [
'''

_MODULE_TAIL = ''']


def normal(city: str, month: int) -> dict:
    """The row for `city` (exact name, accents included) and `month` (1–12)."""
    for row in CLIMATE:
        if row["city"] == city and row["month"] == month:
            return row
    raise KeyError(f"no normal for {city!r} in month {month}")


def warmest_month(city: str) -> int:
    """The month with the highest mean temperature in `city`."""
    rows = [row for row in CLIMATE if row["city"] == city]
    if not rows:
        raise KeyError(f"unknown city: {city!r}")
    return max(rows, key=lambda row: row["mean_c"])["month"]
'''


def climate_module() -> str:
    """The ~24 KB Python module the ``write_file`` tool call writes."""
    rows = []
    for city, country, mean, swing, rain, southern in _CITIES:
        for month in range(1, 13):
            phase = (month - 7 + (6 if southern else 0)) * math.pi / 6
            temp = round(mean + swing * math.cos(phase), 1)
            wet = round(rain * (1 + 0.35 * math.sin(phase + 1.0)), 1)
            rows.append(f'    {{"city": "{city}", "country": "{country}", "month": {month}, '
                        f'"mean_c": {temp}, "rain_mm": {wet}}},\n')
    return _MODULE_HEAD + "".join(rows) + _MODULE_TAIL
