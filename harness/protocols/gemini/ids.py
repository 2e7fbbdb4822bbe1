"""Deterministic tool-call ids, because Gemini's `functionCall` usually has none.

How an id is made (the same rule in the decoder and the encoder, so ids round-trip exactly):

- A `functionCall` that carries an `id` (clients such as llm-gemini and pydantic-ai send one back; the API
  accepts it) keeps it.
- Otherwise its id is `common.synth_tool_id("call_", ordinal, name, args)`, where `ordinal` is the call's
  position among the function calls of its response (or of its model turn in a request) and `name` and
  `args` are their ASCII-escaped compact JSON (so any string, even a lone surrogate, hashes). A turn of a
  request replayed from a response therefore gets the same ids the response decoded to. If that id is
  already taken in the same request (the model made the same call in two turns, as in the llm-gemini
  corpus), the turn number is mixed in: `synth_tool_id("call_", turn, ordinal, name, args)`, so ids stay
  unique within a request.
- The encoder leaves `id` out exactly when the IR id equals the id the decoder would synthesize, so a
  Gemini-shaped conversation stays Gemini-shaped and any other id travels explicitly.
- A `functionResponse` without `id` answers the first unanswered call of the same name in the latest model
  turn; with none, its id is `synth_tool_id("call_", "result", turn, ordinal, name)`. The encoder writes
  the `id` of a functionResponse whenever the call it answers carries one, so ids always come in pairs.
"""

from __future__ import annotations

import json
from typing import Any

from harness.protocols.common import synth_tool_id


def _key(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


class ToolIds:
    """Assigns and remembers tool-call ids within one request or one response."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._pending: list[tuple[str, str]] = []  # (id, name) of unanswered calls of the latest model turn
        self._explicit: set[str] = set()  # ids that travel on the wire

    def implied(self, turn: int, ordinal: int, name: str, args: Any) -> str:
        """The id the decoder gives a call that has no `id` on the wire."""
        base = synth_tool_id("call_", ordinal, _key(name), _key(args))
        if base not in self._used:
            return base
        return synth_tool_id("call_", turn, ordinal, _key(name), _key(args))

    def use(self, call_id: str, name: str, *, explicit: bool) -> None:
        """Record a call's final id as taken and awaiting its result (`explicit`: the id is on the wire)."""
        self._used.add(call_id)
        if explicit:
            self._explicit.add(call_id)
        self._pending.append((call_id, name))

    def new_model_turn(self) -> None:
        """A model turn begins: results now answer its calls, not older ones."""
        self._pending = []

    def implied_result(self, turn: int, ordinal: int, name: str) -> str:
        """The call id a `functionResponse` without `id` answers (see the module rule)."""
        for call_id, call_name in self._pending:
            if call_name == name:
                return call_id
        return synth_tool_id("call_", "result", turn, ordinal, _key(name))

    def is_explicit(self, call_id: str) -> bool:
        """Whether a call with this id carries it on the wire."""
        return call_id in self._explicit

    def answer(self, call_id: str) -> None:
        """Mark the call with this id as answered (no effect if it is not pending)."""
        for i, (pending_id, _) in enumerate(self._pending):
            if pending_id == call_id:
                del self._pending[i]
                return
