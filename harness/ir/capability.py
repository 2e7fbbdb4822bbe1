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
    NESTED_TOOL_SCHEMA = "nested_tool_schema"
    """A tool's parameter schema nests (an object parameter with its own properties, an array of objects). The
    `ollama` SDK (0.6.3) cannot send one: its `Tool.Function.Parameters.Property` model keeps only `type`, `items`,
    `description` and `enum` of each property and drops the rest before the request is made (ollama-python #724)."""
    TOOL_CHOICE = "tool_choice"
    VISION = "vision"
    FILES = "files"
    """A document (a PDF) is sent inline as a file part, not an image; Ollama, swink, Workers AI and most
    OpenAI-compatible providers have no such part."""
    FILE_URL = "file_url"
    """A document is given by a URL the provider fetches (Responses `file_url`, Anthropic's URL document source,
    Gemini `fileData`); Chat Completions and Bedrock have no such form."""
    FILE_ID = "file_id"
    """A document is given by the id of a file stored with the provider. An id means something to the store that
    issued it only, so a protocol declares this only beside the protocols of the same store (OpenAI's Files for
    Chat Completions and Responses): before any other backend the id is a declared loss."""
    CLIENT_TOOL_CALLS = "client_tool_calls"
    """A tool call that is not a function with JSON arguments (`ToolCallPart.call_type`): a custom tool's free text
    or a built-in client tool (Responses `custom_tool_call`, `local_shell_call`, `shell_call`, `apply_patch_call`).
    A protocol without it refuses such a call rather than send it as a function call."""
    THINKING = "thinking"
    JSON_OBJECT = "json_object"
    JSON_SCHEMA = "json_schema"
    STOP_SEQUENCES = "stop_sequences"
    PROMPT_CACHE = "prompt_cache"
    MODELS_LIST = "models_list"
    TOP_P = "top_p"
    """The request carries nucleus sampling (`top_p`); swink's fixed options schema has none."""
    STOP_MAX_TOKENS = "stop_max_tokens"
    """The answer says it was cut by the token limit (a length finish reason); Workers AI's native form has none."""
    STREAM_ERROR_FIRST = "stream_error_first"
    """A 200 stream can begin with an error event, before any content (Ollama answers such an error with its
    HTTP status instead)."""
    NOT_FOUND_ERROR = "not_found_error"
    """The client raises a not-found error of its own for an unknown model (swink's reads a 404 as an unclassified
    client error)."""
    OVERLOADED_ERROR = "overloaded_error"
    """An overloaded backend is told apart, over HTTP and inside a stream, and the client raises its own error for
    it (swink has no overloaded kind: a 503 is a network error, and its stream errors cannot name it)."""
    # The two below describe what an SDK surfaces to its caller. Drivers declare them; checks that need them
    # are skipped for a driver without them rather than failed (a protocol that cannot carry a value is not
    # a proxy bug).
    THINKING_SIGNATURE = "thinking_signature"
    RETRY_AFTER = "retry_after"
