"""Ids in OpenAI's own formats, derived deterministically where the IR has none.

The real API names a response `resp_` and its output items `msg_` (messages), `rs_` (reasoning), `fc_`
(function calls), each followed by 50 hex digits; a function call's `call_id` is `call_` and 24 letters or
digits. The IR keeps only the response id and the call id (the id a tool result answers): item ids are wire
bookkeeping, so an encoder derives them from the response id and the item's place, the same on every run.
"""

from __future__ import annotations

import hashlib

RESPONSE = "resp_"
MESSAGE = "msg_"
REASONING = "rs_"
FUNCTION_CALL = "fc_"
CALL = "call_"
_HEX_DIGITS = 50
_CALL_DIGITS = 24


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()


def derived(prefix: str, *parts: object) -> str:
    """`prefix` + 50 hex digits derived from `parts` (an item id, or a response id)."""
    return prefix + _digest(prefix, *parts)[:_HEX_DIGITS]


def call_id(*parts: object) -> str:
    """A `call_` id derived from `parts`, for a function call that came without one."""
    return CALL + _digest(CALL, *parts)[:_CALL_DIGITS]


PLACEHOLDER_RESPONSE_ID = derived(RESPONSE, "harness")
"""The response id sent when the IR response has none (the wire requires one)."""


def response_id(value: str | None) -> str:
    """The wire id of a response whose IR id is `value`: kept when it is a `resp_` id; another protocol's id
    (Anthropic's `msg_...` would read as a message item here) becomes a `resp_` id derived from it; none is the
    placeholder."""
    if value is None:
        return PLACEHOLDER_RESPONSE_ID
    return value if value.startswith(RESPONSE) else derived(RESPONSE, value)
