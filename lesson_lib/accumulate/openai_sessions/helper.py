"""What the SDK's stream helper keeps of a session turn (``_TurnState`` and
``AgentTurnResultCollector``): `final()` of the session accumulator is its state."""

from __future__ import annotations

import copy
from typing import Any

from ...wires import openai_sessions as oas


class SdkHelper:
    """What the SDK's stream helper keeps, fed the payloads it accepts: ``_TurnState``
    (the root turn's id, whether it ended, whether the helper stops) and
    ``AgentTurnResultCollector`` (the turn, its final messages, the actions it waits on,
    whether the session failed), rule for rule, on the payloads as data."""

    def __init__(self, session_id: str | None) -> None:
        self.given = session_id            # the session the helper was asked to follow
        self.session_id = session_id       # the collector's
        self.turn_id: str | None = None
        self.turn_ended = False
        self.done = False
        self.turn: dict | None = None
        self.boundary = False
        self.session_failed = False
        self.required_actions: list = []
        self.messages: dict[str, tuple[int, dict]] = {}

    def take(self, payload: dict) -> None:
        """One accepted event, until the helper stops."""
        if self.done:
            return
        kind, turn = payload.get("type"), payload.get("turn")
        if self.given is None:             # no session named: the stream's own
            self.given = oas.session_id_of(payload) or payload.get("session_id")
        if kind == oas.TURN_CREATED and oas.is_root_turn(turn) and self.turn_id is None:
            self.turn_id = payload.get("turn_id")
        if kind in oas.TURN_ENDED and self.turn_id is not None \
                and payload.get("turn_id") == self.turn_id:
            self.turn_ended = True
        self._collect(kind, payload)
        self.done = self._terminal(kind, payload)

    def _terminal(self, kind: Any, payload: dict) -> bool:
        snapshot = oas.session_id_of(payload)
        return oas.helper_ends(kind, turn_ended=self.turn_ended,
                               turn_started=self.turn_id is not None,
                               same_session=snapshot is not None and snapshot == self.given)

    def _collect(self, kind: Any, payload: dict) -> None:
        if self.boundary:
            return
        turn, snapshot = payload.get("turn"), oas.session_id_of(payload)
        ended = (isinstance(self.turn, dict)
                 and self.turn.get("status") in oas.TURN_DONE_STATUSES)
        if kind == oas.SESSION_CREATED:
            self.session_id = snapshot
        elif kind == oas.TURN_CREATED:
            if self.turn is None and oas.is_root_turn(turn):
                self.turn = copy.deepcopy(turn)
                self.session_id = payload.get("session_id")
        elif kind in oas.TURN_ENDED:
            if self.turn is not None and payload.get("turn_id") == self.turn.get("id"):
                self.turn = copy.deepcopy(turn)
                self.required_actions = []
        elif kind == oas.ITEM_DONE:
            self._message(payload)
        elif kind == oas.SESSION_IN_PROGRESS:
            self.required_actions = []
        elif kind == oas.SESSION_REQUIRES_ACTION:
            self.session_id = snapshot
            session = payload.get("session")
            actions = session.get("required_actions") if isinstance(session, dict) else None
            self.required_actions = copy.deepcopy(actions) if isinstance(actions, list) else []
        elif kind == oas.SESSION_FAILED:
            self.session_id = snapshot
            self.session_failed = self.boundary = True
        elif kind == oas.SESSION_BUDGET_REACHED and snapshot is not None:
            if self.turn is None and self.session_id in (None, snapshot):
                self.session_id = snapshot
                self.boundary = True
            elif self.turn is not None and snapshot == self.session_id and ended:
                self.required_actions = []
                self.boundary = True
        elif kind == oas.SESSION_IDLE and ended:
            self.required_actions = []
            self.boundary = True

    def _message(self, payload: dict) -> None:
        """The final messages: the root turn's completed answers, by item id."""
        item = payload.get("item")
        if (isinstance(item, dict) and self.turn is not None
                and item.get("turn_id") == self.turn.get("id")
                and item.get("type") == oas.MESSAGE_ITEM
                and item.get("phase") != oas.COMMENTARY and item.get("status") == oas.COMPLETED):
            index = payload.get("output_index")
            self.messages[str(item.get("id"))] = (index if type(index) is int else 0,
                                                  copy.deepcopy(item))

    def final(self) -> dict:
        """The helper's state as data (see the module)."""
        return {"turn": copy.deepcopy(self.turn),
                "messages": [copy.deepcopy(m) for _, m in
                             sorted(self.messages.values(), key=lambda pair: pair[0])],
                "required_actions": copy.deepcopy(self.required_actions),
                "session_failed": self.session_failed, "turn_ended": self.turn_ended,
                "done": self.done}
