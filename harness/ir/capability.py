"""Capabilities: what a scenario needs from the SDK client, the proxy's frontend and the backend.

In the IR because every side declares them: codecs (which may import only `ir`, `wire` and `stream`), SDK
drivers, and scenarios. A case whose scenario needs one that a party lacks is reported unsupported.
"""

from __future__ import annotations

from enum import StrEnum


class Capability(StrEnum):
    """Something a scenario needs from the SDK client, the proxy's frontend and the backend."""

    TOOLS = "tools"
    PARALLEL_TOOLS = "parallel_tools"
    TOOL_CHOICE = "tool_choice"
    VISION = "vision"
    THINKING = "thinking"
    JSON_OBJECT = "json_object"
    JSON_SCHEMA = "json_schema"
    STOP_SEQUENCES = "stop_sequences"
    PROMPT_CACHE = "prompt_cache"
    MODELS_LIST = "models_list"
    # The two below describe what an SDK surfaces to its caller. Drivers declare them; checks that need them
    # are skipped for a driver without them rather than failed (a protocol that cannot carry a value is not
    # a proxy bug).
    THINKING_SIGNATURE = "thinking_signature"
    RETRY_AFTER = "retry_after"
