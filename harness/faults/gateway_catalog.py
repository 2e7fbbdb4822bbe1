"""Faults modelled on the bugs the gates of real gateways found (`docs/gateways.md`, ids A*, P*, R* there): each
distinct bug class becomes a fault of the built-in proxy, so `conformance selftest` proves the gate keeps catching
it in any gateway. Bugs whose class an older fault already models are listed there (image-dropped,
gemini-function-response-name-hardcoded, midstream-error-as-stop, temperature-dropped).
"""

from __future__ import annotations

from harness.faults import gateway_hooks as g
from harness.faults.fault import Fault, Scope, witness

_STREAM = (True,)
_NONSTREAM = (False,)
_LITELLM = "LiteLLM proxy 1.106.2"
_PORTKEY = "Portkey AI Gateway 1.15.2"
_CCR = "claude-code-router 2.0.0"
_NULLPLATFORM = "nullplatform LLM Gateway 2.0.11"
_MLFLOW = "MLflow AI Gateway 3.17.2"

GATEWAY_FAULTS: tuple[Fault, ...] = (
    Fault(
        "error-status-flattened-to-500",
        "Every upstream HTTP error (401, 404, 429, context overflow) reaches the client as a 500 server error.",
        f"{_LITELLM}, Gemini frontend (A1): the upstream error is wrapped in a generic exception and answered 500; "
        "clients cannot tell a bad key or a full context from an outage, and retry what they should not.",
        "response side (error.kind, error.status)",
        g.ERROR_STATUS_FLATTENED,
        Scope(("error-auth-401", "error-not-found-404", "error-context-overflow-400", "error-rate-limit-429")),
        witness("error-auth-401", "gemini", "openai", False),
    ),
    Fault(
        "overloaded-as-server-error",
        "An upstream 'overloaded' error (Anthropic 529 overloaded_error) reaches the client as a 500 server error.",
        f"{_LITELLM} (A2): 529 overloaded_error comes back as 500 api_error / internal_server_error.",
        "response side (error.kind, error.status)",
        g.OVERLOADED_AS_SERVER_ERROR,
        Scope(("error-overloaded",)),
        witness("error-overloaded", "openai", "anthropic", False),
    ),
    Fault(
        "retry-after-dropped",
        "An upstream 429 keeps its status but loses its Retry-After header.",
        f"{_LITELLM} (A3) and {_CCR} (R1): the status is passed on, the header is not; SDKs fall back to their own "
        "backoff and hammer the provider.",
        "response side (answer.retry_after, error.retry_after)",
        g.RETRY_AFTER_DROPPED,
        Scope(("error-rate-limit-429",)),
        witness("error-rate-limit-429", "openai", "anthropic", False),
    ),
    Fault(
        "stream-error-sent-as-200",
        "An upstream HTTP error on a streamed request is sent as HTTP 200, a message start and an error event.",
        f"{_LITELLM}, Anthropic frontend before Gemini (A4): the error status is lost; a real provider answers a "
        "request-level error with its status before any stream event.",
        "response side (error.status)",
        g.STREAM_ERROR_AFTER_200,
        Scope(("error-auth-401", "error-not-found-404", "error-rate-limit-429", "error-server-500"), streams=_STREAM),
        witness("error-auth-401", "anthropic", "gemini", True),
    ),
    Fault(
        "midstream-error-kind-lost",
        "A mid-stream 'overloaded' error reaches the client as a generic server error.",
        f"{_LITELLM}, Anthropic frontend (A5): overloaded_error in the stream becomes api_error.",
        "response side (error.kind)",
        g.MIDSTREAM_ERROR_KIND_LOST,
        Scope(("midstream-error",), streams=_STREAM),
        witness("midstream-error", "anthropic", "openai", True),
    ),
    Fault(
        "gemini-stream-error-openai-shaped",
        "A Gemini stream's error chunk is written in OpenAI's shape with a string code; google-genai crashes on it.",
        f'{_LITELLM}, Gemini frontend (A6): `{{"error": {{..., "code": "500"}}}}` in a Gemini stream; the SDK '
        "compares the code with an integer and raises TypeError.",
        "response side (the SDK fails) and frontend wire",
        g.GEMINI_STREAM_ERROR_OPENAI_SHAPED,
        Scope(("midstream-error",), frontends=("gemini",), streams=_STREAM),
        witness("midstream-error", "gemini", "openai", True),
    ),
    Fault(
        "truncated-stream-as-stop",
        "An upstream stream that ends without its terminal marker reaches the client as a complete answer.",
        f"{_LITELLM} (A7) and {_CCR} (R2): a cut connection looks like a normal stop (and LiteLLM invents usage).",
        "response side (error checks)",
        g.TRUNCATED_STREAM_AS_STOP,
        Scope(("truncated-stream",), streams=_STREAM),
        witness("truncated-stream", "openai", "anthropic", True),
    ),
    Fault(
        "stream-usage-zeroed",
        "A streamed answer reports 0 input and output tokens.",
        f"{_LITELLM}, Gemini frontend (A8: usageMetadata all zero) and {_CCR} (R4, R8: message_delta usage 0 "
        "before Gemini or an OpenAI upstream asked without stream_options.include_usage).",
        "response side (usage)",
        g.STREAM_USAGE_ZEROED,
        Scope(("text-basic", "system-prompt", "tool-call-single"), streams=_STREAM),
        witness("text-basic", "anthropic", "openai", True),
    ),
    Fault(
        "tool-schema-emptied",
        "Tool definitions reach the backend with an empty parameter schema.",
        f"{_LITELLM}, Gemini frontend (A9): functionDeclarations' parameters arrive as "
        '{"type": "object", "properties": {}}; the model calls the tool without arguments.',
        "request side",
        g.TOOL_SCHEMA_EMPTIED,
        Scope(("tool-call-single", "tool-call-parallel", "tool-choice-required")),
        witness("tool-call-single", "gemini", "openai", False),
    ),
    Fault(
        "nested-tool-schema-flattened",
        "A tool parameter keeps only its type, description, enum and items: a nested object's properties and "
        "required list are dropped before the upstream.",
        f"{_MLFLOW} (ML8): `parameters` is parsed into a pydantic model with those four fields per property; the "
        "model sees an object parameter with no fields and fills it at random.",
        "request side",
        g.NESTED_TOOL_SCHEMA_FLATTENED,
        Scope(("tool-nested-schema",)),
        witness("tool-nested-schema", "openai", "anthropic", True),
    ),
    Fault(
        "file-part-dropped",
        "A document (an inline PDF) the client sent is left out of the upstream request.",
        f"{_CCR} (R14): an Anthropic document block is dropped before OpenAI and Gemini; {_PORTKEY} (P11): an "
        "OpenAI file part is dropped before Gemini. The model answers about a file it never saw.",
        "request side",
        g.FILE_DROPPED,
        Scope(("file-pdf-inline",)),
        witness("file-pdf-inline", "anthropic", "openai", False),
    ),
    Fault(
        "file-data-url-as-base64",
        "A file part's base64 data is sent upstream as the whole data URL (`data:application/pdf;base64,...`).",
        f"{_PORTKEY} (P10): an OpenAI file part becomes an Anthropic document whose base64 `data` is the client's "
        "data URL, which Anthropic refuses as invalid base64.",
        "request side",
        g.FILE_DATA_URL_AS_BASE64,
        Scope(("file-pdf-inline",)),
        witness("file-pdf-inline", "openai", "anthropic", False),
    ),
    Fault(
        "json-mode-dropped",
        "The client's JSON mode (response format) is not sent upstream.",
        f"{_LITELLM}, Gemini frontend (A11): responseMimeType application/json is dropped.",
        "request side",
        g.JSON_MODE_DROPPED,
        Scope(("json-object", "json-schema")),
        witness("json-object", "gemini", "openai", False),
    ),
    Fault(
        "thinking-config-dropped",
        "The client's thinking settings are not sent upstream.",
        f"{_LITELLM}, Gemini frontend (A12): thinkingConfig is dropped; {_CCR} drops the thinking budget (R4).",
        "request side",
        g.THINKING_CONFIG_DROPPED,
        Scope(("thinking-with-signature", "thinking-then-tool")),
        witness("thinking-with-signature", "anthropic", "gemini", False),
    ),
    Fault(
        "tool-choice-specific-widened",
        "A tool choice naming one tool is sent as 'call any tool'.",
        f"{_LITELLM}, Gemini frontend (A13): mode ANY with allowedFunctionNames becomes tool_choice required.",
        "request side",
        g.TOOL_CHOICE_WIDENED,
        Scope(("tool-choice-specific",)),
        witness("tool-choice-specific", "gemini", "openai", False),
    ),
    Fault(
        "empty-arguments-call-dropped",
        "A streamed tool call whose arguments are empty is dropped.",
        f"{_LITELLM}, Gemini frontend (A14): a call to a tool without parameters disappears from the stream.",
        "response side (tool_calls)",
        g.EMPTY_ARGUMENTS_CALL_DROPPED,
        Scope(("tool-empty-arguments",), streams=_STREAM),
        witness("tool-empty-arguments", "anthropic", "openai", True),
    ),
    Fault(
        "cached-tokens-dropped",
        "Prompt-cache reads are not reported in the usage.",
        f"{_LITELLM}, Gemini frontend (A15): cachedContentTokenCount is left out.",
        "response side (usage)",
        g.CACHED_TOKENS_DROPPED,
        Scope(("usage-with-cache",)),
        witness("usage-with-cache", "openai", "anthropic", False),
    ),
    Fault(
        "thinking-signature-dropped",
        "The thinking signature the client must send back is dropped (empty).",
        f"{_LITELLM}, Anthropic frontend before Gemini (A17): thoughtSignature is dropped, the thinking block says "
        'signature ""; the next turn cannot be verified.',
        "response side (thinking signature)",
        g.THINKING_SIGNATURE_DROPPED,
        Scope(("thinking-with-signature", "thinking-then-tool")),
        witness("thinking-with-signature", "anthropic", "gemini", False),
    ),
    Fault(
        "empty-text-before-tool-call",
        "A non-streamed answer with a tool call gets an empty text part before it.",
        f'{_LITELLM}, Anthropic frontend before Ollama (A18): a `{{"type": "text", "text": ""}}` block; a '
        "client that sends the turn back gets Anthropic's 400 'text content blocks must be non-empty'.",
        "response side (content)",
        g.EMPTY_TEXT_BEFORE_TOOL_CALL,
        Scope(("tool-call-single", "tool-call-parallel"), streams=_NONSTREAM),
        witness("tool-call-single", "anthropic", "ollama", False),
    ),
    Fault(
        "parallel-calls-share-index",
        "Two parallel tool calls of an OpenAI stream carry the same index; the SDK merges them into one.",
        f"{_LITELLM} before Ollama (A19) and {_PORTKEY} before Gemini (P2).",
        "response side (tool_calls)",
        g.PARALLEL_CALLS_SAME_INDEX,
        Scope(("tool-call-parallel",), frontends=("openai",), streams=_STREAM),
        witness("tool-call-parallel", "openai", "gemini", True),
    ),
    Fault(
        "tool-result-name-dropped",
        "Tool results reach the backend without the name of the tool that produced them.",
        f"{_LITELLM} before Ollama (A20): tool messages without tool_name.",
        "request side",
        g.TOOL_RESULT_NAME_DROPPED,
        Scope(("tool-result-roundtrip",), backends=("ollama", "gemini")),
        witness("tool-result-roundtrip", "openai", "ollama", False),
    ),
    Fault(
        "tool-calls-reported-as-stop",
        "An answer that calls tools says it stopped normally (stop / end_turn) instead of for tool use.",
        f"{_PORTKEY} before Gemini (P1) and {_CCR} before Gemini (R4): agents that loop on finish_reason "
        "'tool_calls' / stop_reason 'tool_use' stop instead of running the tool.",
        "response side (stop_reason)",
        g.TOOL_CALLS_REPORTED_AS_STOP,
        Scope(("tool-call-single", "tool-call-parallel", "text-then-tool")),
        witness("tool-call-single", "openai", "gemini", False),
    ),
    Fault(
        "max-tokens-dropped",
        "The client's max_tokens is not sent upstream.",
        f"{_CCR} before Gemini (R4): generationConfig arrives empty (maxOutputTokens, temperature, topP and stop "
        "sequences all dropped); answers run to the model's own limit.",
        "request side",
        g.MAX_TOKENS_DROPPED,
        Scope(("text-basic", "sampling-params", "max-tokens-length")),
        witness("text-basic", "anthropic", "gemini", False),
    ),
    Fault(
        "sampling-params-dropped",
        "The client's top_p and stop sequences are not sent upstream.",
        f"{_CCR} before OpenAI (R6) and Gemini (R4).",
        "request side",
        g.SAMPLING_DROPPED,
        Scope(("sampling-params", "stop-sequence")),
        witness("sampling-params", "anthropic", "openai", False),
    ),
    Fault(
        "system-as-user-turn",
        "The system prompt is sent as a user turn of its own instead of the backend's system field.",
        f"{_CCR} before Gemini (R4): the system prompt becomes the first user content, not systemInstruction.",
        "request side",
        g.SYSTEM_AS_USER_TURN,
        Scope(("system-prompt",)),
        witness("system-prompt", "anthropic", "gemini", False),
    ),
    Fault(
        "tool-choice-dropped",
        "The client's tool choice is not sent upstream (or in a form the backend does not accept).",
        f"{_CCR}: dropped before Gemini (R4); before OpenAI, Anthropic 'any' is sent as tool_choice \"any\", which "
        "OpenAI rejects (R7).",
        "request side",
        g.TOOL_CHOICE_DROPPED,
        Scope(("tool-choice-required", "tool-choice-specific", "tool-choice-none")),
        witness("tool-choice-required", "anthropic", "openai", False),
    ),
    Fault(
        "tool-result-blocks-stringified",
        "A tool result's content blocks reach the backend as their JSON text.",
        f'{_CCR} (R5): the model reads `[{{"type":"text","text":"18°C and sunny"}}]` instead of the result.',
        "request side",
        g.TOOL_RESULT_STRINGIFIED,
        Scope(("tool-result-roundtrip",)),
        witness("tool-result-roundtrip", "anthropic", "openai", False),
    ),
    Fault(
        "system-as-assistant-turn",
        "The system prompt reaches the backend as a leading assistant turn.",
        f"{_NULLPLATFORM} (NP8): before Anthropic the persona is something the model said, not its instructions.",
        "request side",
        g.SYSTEM_AS_ASSISTANT_TURN,
        Scope(("system-prompt",)),
        witness("system-prompt", "anthropic", "anthropic", False),
    ),
    Fault(
        "text-sent-again-at-stop",
        "A streamed text block's text is sent a second time as the block closes.",
        f"{_NULLPLATFORM} (NP19): an OpenAI client before Anthropic, stopped by a stop sequence, reads "
        "'1, 2, 31, 2, 3, ' for '1, 2, 3, '.",
        "response side (text_equals)",
        g.TEXT_SENT_AGAIN,
        Scope(("stop-sequence",), streams=_STREAM),
        witness("stop-sequence", "openai", "anthropic", True),
    ),
)
"""The faults found by gating real gateways, in the order of docs/gateways.md."""
