"""The fault catalog: named bugs that real translating proxies shipped, each switchable in the built-in proxy.

A fault says what it breaks, which real bug class it models (with the public report it comes from), where it
can show (frontends, backends, scenarios, streaming), which cases are known to catch it (its witnesses, the
smallest set: tests and `conformance selftest --quick` run those), and how it is caught. Its implementation is
a `TranslateHooks` value (see `harness.faults.hooks`); `conformance serve` configs select one by name with
`hooks = "<fault-name>"`.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping

from harness.faults import answer_hooks as ah
from harness.faults import converse_workers_swink_catalog
from harness.faults import hooks as h
from harness.faults import responses_hooks as rh
from harness.faults import upstream_hooks as uh
from harness.faults.fault import Fault, Scope, witness
from harness.faults.gateway_catalog import GATEWAY_FAULTS
from harness.proxy import HookContext, TranslateHooks

_w = witness
_STREAM = (True,)
ISSUE_8_FAULTS: tuple[Fault, ...] = (
    Fault(
        "tools-dropped-on-stream",
        "Tool definitions (and tool_choice) are left out of the upstream request when the client streams.",
        "A streaming request builder kept apart from the non-streaming one that forgets the tools (rule: "
        "what the client offered reaches the backend, streamed or not).",
        "request side",
        h.TOOLS_DROPPED_ON_STREAM,
        Scope(("tool-call-single", "tool-call-parallel", "text-then-tool"), streams=_STREAM),
        witness("tool-call-single", "openai", "anthropic", True),
    ),
    Fault(
        "gemini-function-response-name-hardcoded",
        "Every Gemini functionResponse.name is a constant instead of the name of the call it answers.",
        "OpenAI tool messages carry no name; converters write 'unknown'/'tool_result' into functionResponse.name "
        "(mozilla-ai/any-llm#1318, archestra#7583; Gemini rejects or misattributes the results).",
        "request side",
        h.GEMINI_FUNCTION_RESPONSE_NAME,
        Scope(("tool-result-roundtrip",), backends=("gemini",)),
        witness("tool-result-roundtrip", "openai", "gemini", False),
    ),
    Fault(
        "second-parallel-tool-call-dropped",
        "Of two tool calls in one turn only the first reaches the client.",
        "Converters that read tool_calls[0] only (LiteLLM PR #27638 review; LiteLLM #15307 parallel calls on "
        "/v1/messages streaming).",
        "response side (tool_calls check)",
        h.SECOND_PARALLEL_CALL_DROPPED,
        Scope(("tool-call-parallel",)),
        witness("tool-call-parallel", "anthropic", "openai", True),
    ),
    Fault(
        "arguments-lost-with-name",
        "Tool arguments that arrive in the same chunk as the call's name are dropped; the client sees {}.",
        "LiteLLM #29491, #25390, #25836, #25605: Anthropic /v1/messages streaming emits tool_use with input {} "
        "when the backend (Gemini, Ollama, OpenAI-compatible) sends the whole arguments with the name.",
        "response side (tool_calls check)",
        h.ARGUMENTS_LOST_WITH_NAME,
        Scope(("tool-call-single", "tool-call-parallel"), backends=("gemini", "ollama"), streams=_STREAM),
        witness("tool-call-single", "anthropic", "gemini", True),
    ),
    Fault(
        "duplicate-message-start",
        "The Anthropic stream carries message_start twice.",
        "Stream adapters that emit message_start on every upstream role chunk (rule: exactly one "
        "message_start; clients reset the message they are building).",
        "response side (stream events) and frontend wire",
        h.DUPLICATE_MESSAGE_START,
        Scope(("text-basic", "tool-call-single"), frontends=("anthropic",), streams=_STREAM),
        witness("text-basic", "anthropic", "openai", True),
    ),
    Fault(
        "delta-without-block-start",
        "A content_block_delta arrives for a text block whose content_block_start was never sent.",
        "Adapters that open blocks lazily and skip the start of the first text block (rule: every "
        "content_block_delta belongs to a started block; the Anthropic SDK fails on it).",
        "response side (SDK fails) and frontend wire",
        h.DELTA_WITHOUT_BLOCK_START,
        Scope(("text-basic", "multi-turn"), frontends=("anthropic",), streams=_STREAM),
        witness("text-basic", "anthropic", "openai", True),
    ),
    Fault(
        "zeroed-usage-in-message-start",
        "message_start says input_tokens 0 and the real count never follows (message_delta has output only).",
        "LiteLLM #41406 / PR #42102: /v1/messages bridge sends usage 0 in message_start; clients that read the "
        "prompt size there see 0 for the whole turn.",
        "response side (usage)",
        h.ZEROED_START_USAGE,
        Scope(("text-basic", "system-prompt", "multi-turn"), frontends=("anthropic",), streams=_STREAM),
        witness("text-basic", "anthropic", "openai", True),
    ),
    Fault(
        "zero-input-at-message-start",
        "message_start says input_tokens 0; the real count follows only in message_delta.",
        "What LiteLLM's /v1/messages adapter and claude-code-router send in front of an OpenAI-style upstream "
        "(message_start usage all zeros, the counts in message_delta), and OpenRouter's Anthropic endpoint too "
        "(rig PR #2236): agents that size their context from message_start see 0 (rule: start_usage_reported).",
        "response side (start usage)",
        h.ZERO_INPUT_AT_MESSAGE_START,
        Scope(("text-basic", "system-prompt", "multi-turn"), frontends=("anthropic",), streams=_STREAM),
        _w("text-basic", "anthropic", "openai", True),
    ),
    Fault(
        "thinking-as-text",
        "Reasoning is sent as ordinary answer text instead of a thinking block.",
        "reasoning_content / thought parts mapped to content by converters that know no thinking field "
        "(rule: thinking stays thinking; agents show or resend it differently).",
        "response side (thinking_present, text)",
        h.THINKING_AS_TEXT,
        Scope(("thinking-with-signature", "thinking-then-tool")),
        witness("thinking-with-signature", "anthropic", "gemini", True),
    ),
    Fault(
        "done-appended-to-anthropic-stream",
        "An OpenAI `data: [DONE]` line follows message_stop on an Anthropic stream.",
        "Shared SSE writers that always close with [DONE] (rule: nothing follows message_stop; strict "
        "clients fail on the unnamed event, lenient ones hide it).",
        "frontend wire (the Anthropic SDK ignores it)",
        h.DONE_APPENDED_TO_ANTHROPIC,
        Scope(("text-basic", "tool-call-single"), frontends=("anthropic",), streams=_STREAM),
        witness("text-basic", "anthropic", "openai", True),
    ),
    Fault(
        "length-mapped-to-stop",
        "A generation cut by max_tokens is reported as a normal stop.",
        "finish_reason 'length' mapped to 'stop' / end_turn (stop-reason rule; agents then treat a cut "
        "answer as complete).",
        "response side (stop_reason)",
        h.STOP_REASON_LENGTH_AS_STOP,
        Scope(("max-tokens-length",)),
        witness("max-tokens-length", "openai", "anthropic", False),
    ),
    Fault(
        "usage-chunk-dropped",
        "The final usage-only chunk (choices: []) of an OpenAI stream is not forwarded.",
        "Chunk filters that skip chunks without choices (rule: with stream_options.include_usage the usage "
        "arrives on its own final chunk).",
        "response side (usage_present, usage)",
        h.USAGE_CHUNK_DROPPED,
        Scope(("text-basic", "tool-call-single", "usage-with-cache"), frontends=("openai",), streams=_STREAM),
        witness("text-basic", "openai", "anthropic", True),
    ),
    Fault(
        "tool-fragments-reordered",
        "Tool-argument fragments reach the client out of order.",
        "Fragments collected per call in an unordered structure before being re-emitted (rule: "
        "input_json_delta / arguments fragments concatenate in arrival order).",
        "response side (tool_calls check)",
        h.TOOL_FRAGMENTS_REORDERED,
        Scope(("tool-arguments-fragmented",), backends=("openai", "anthropic", "groq", "deepseek"), streams=_STREAM),
        witness("tool-arguments-fragmented", "anthropic", "openai", True),
    ),
    Fault(
        "text-buffered-until-end",
        "The answer text is held back and sent in one piece when the block ends.",
        "Non-incremental stream translation (collect, then convert); the content is right, the stream is not "
        "(rule: a translated stream stays a stream).",
        "text-buffering check (the content diff cannot see it)",
        h.TEXT_BUFFERED,
        Scope(("long-output", "text-basic", "unicode-multibyte"), streams=_STREAM),
        witness("long-output", "openai", "anthropic", True),
    ),
    Fault(
        "midstream-error-as-stop",
        "An error inside a 200 stream is turned into a normal end of the answer.",
        "Stream adapters that map any upstream end to a stop event (rule: a mid-stream error reaches the "
        "client as its protocol's error, never as a complete answer).",
        "response side (error checks)",
        h.MIDSTREAM_ERROR_AS_STOP,
        Scope(("midstream-error",), streams=_STREAM),
        witness("midstream-error", "openai", "anthropic", True),
    ),
    Fault(
        "rate-limit-as-server-error",
        "An upstream 429 reaches the client as a 500 without Retry-After.",
        "LiteLLM #23901 and #4259: provider 429 (quota / rate limit) returned as 500, so clients do not back off.",
        "response side (error.kind, error.status)",
        h.RATE_LIMIT_AS_SERVER_ERROR,
        Scope(("error-rate-limit-429",)),
        witness("error-rate-limit-429", "openai", "anthropic", False),
    ),
    Fault(
        "system-prompt-dropped",
        "The system prompt is not carried to the upstream request.",
        "System prompt lost between protocols that carry it differently (top-level `system`, "
        "systemInstruction, a system message).",
        "request side",
        h.SYSTEM_DROPPED,
        Scope(("system-prompt",)),
        witness("system-prompt", "openai", "anthropic", False),
    ),
    Fault(
        "temperature-dropped",
        "The client's temperature is not sent upstream.",
        "Sampling parameters left out by a translation's parameter allow-list.",
        "request side",
        h.TEMPERATURE_DROPPED,
        Scope(("sampling-params",)),
        witness("sampling-params", "anthropic", "openai", False),
    ),
    Fault(
        "image-dropped",
        "Image parts of a user turn are left out of the upstream request.",
        "Content converters that keep text parts only.",
        "request side",
        h.IMAGE_DROPPED,
        Scope(("vision-base64", "vision-multiple-images")),
        witness("vision-base64", "openai", "anthropic", False),
    ),
    Fault(
        "file-sent-as-image",
        "A document (an inline PDF) is sent upstream as an image of the same media type.",
        "Converters whose only inline-media form is an image (this harness's own IR until issue 25: a text/plain "
        "file became an image block, which the Anthropic and Bedrock specs refuse).",
        "request side",
        h.FILE_SENT_AS_IMAGE,
        Scope(("file-pdf-inline",)),
        witness("file-pdf-inline", "openai", "anthropic", False),
    ),
    Fault(
        "multibyte-split-corrupted",
        "A UTF-8 character split across two network chunks arrives as U+FFFD.",
        "Each upstream chunk decoded on its own with errors='replace' (rule: decode the byte stream, not the chunks).",
        "response side (text_equals)",
        h.MULTIBYTE_SPLIT_CORRUPTED,
        Scope(("unicode-multibyte",), streams=_STREAM),
        witness("unicode-multibyte", "openai", "anthropic", True),
    ),
    Fault(
        "upstream-key-echoed",
        "The proxy's upstream key appears in the error the client receives.",
        "Upstream exception text (with the request's headers) passed to the client or logs.",
        "secret-leak check",
        h.UPSTREAM_KEY_ECHOED,
        Scope(("error-auth-401", "error-server-500", "error-rate-limit-429")),
        witness("error-auth-401", "openai", "anthropic", False),
    ),
    # Bedrock Converse, Workers AI's native route and swink's proxy stream (issue 16), declared in their own module
    *converse_workers_swink_catalog.FAULTS,
)


# --- the Responses API (issue 15): bugs of Responses translations, seen by a Responses client ------------------
_RESPONSES = ("responses",)
_SCOUT = "verified by the gateway scout against the reference backends"
ISSUE_8_FAULTS += (
    Fault(
        "responses-sequence-number-from-one",
        "The Responses stream numbers its events from 1 instead of 0.",
        f"codex-rosetta 0.1.0 starts sequence_number at 1 ({_SCOUT}); api.openai.com starts at 0 (rule: a client "
        "resuming a stream after event N, or checking for lost events, counts from 0).",
        "frontend wire",
        rh.SEQUENCE_FROM_ONE,
        Scope(("text-basic", "tool-call-single"), frontends=_RESPONSES, streams=_STREAM),
        _w("text-basic", "responses", "openai", True),
    ),
    Fault(
        "responses-sequence-number-missing",
        "Responses stream events carry no sequence_number (but on response.output_item.done).",
        f"LiteLLM 1.106.2 /v1/responses omits sequence_number on every event but output_item.done ({_SCOUT}); "
        "open-responses-server 0.4.1 omits it on all.",
        "frontend wire",
        rh.SEQUENCE_MISSING,
        Scope(("text-basic", "tool-call-single"), frontends=_RESPONSES, streams=_STREAM),
        _w("text-basic", "responses", "anthropic", True),
    ),
    Fault(
        "responses-sequence-number-gap",
        "A lifecycle event (response.in_progress) is filtered out after the events were numbered: a gap.",
        "Stream writers that number events before a later filter drops some (rule: sequence_number goes up by "
        "exactly one; a gap tells a client an event was lost).",
        "frontend wire",
        rh.SEQUENCE_GAP,
        Scope(("text-basic", "multi-turn"), frontends=_RESPONSES, streams=_STREAM),
        _w("text-basic", "responses", "gemini", True),
    ),
    Fault(
        "responses-sequence-number-repeated",
        "Events written for one upstream event share one sequence_number.",
        "A counter advanced per upstream chunk instead of per event written (created and in_progress, "
        "output_text.done and content_part.done come out with the same number).",
        "frontend wire",
        rh.SEQUENCE_REPEATED,
        Scope(("text-basic", "tool-call-single"), frontends=_RESPONSES, streams=_STREAM),
        _w("tool-call-single", "responses", "openai", True),
    ),
    Fault(
        "responses-completed-missing",
        "The Responses stream ends after its last output item without response.completed.",
        "Adapters that write the terminal event only from a final upstream chunk they never see (rule: a "
        "Responses stream ends with response.completed, .incomplete or .failed; without it the SDK's "
        "stream helper has no final response).",
        "response side (malformed_stream) and frontend wire",
        rh.COMPLETED_MISSING,
        Scope(("text-basic", "tool-call-single", "thinking-with-signature"), frontends=_RESPONSES, streams=_STREAM),
        _w("text-basic", "responses", "anthropic", True),
    ),
    Fault(
        "responses-output-index-mismatch",
        "Events inside an output item carry output_index 0 (the upstream choice index), not their item's index.",
        "Chat Completions choice index copied into Responses events (rule: every event names the output item "
        "its output_item.added opened; the SDK files deltas under the wrong item).",
        "frontend wire and response side",
        rh.OUTPUT_INDEX_MISMATCH,
        Scope(
            ("text-then-tool", "tool-call-parallel", "thinking-with-signature"), frontends=_RESPONSES, streams=_STREAM
        ),
        _w("text-then-tool", "responses", "openai", True),
    ),
    Fault(
        "responses-item-id-mismatch",
        "Events inside an output item carry a freshly minted item_id instead of the id output_item.added gave.",
        "Ids minted per written event rather than per item (rule: item_id names the item output_item.added "
        "opened; clients that key parts by item id split one message into many).",
        "frontend wire (the openai SDK does not check item ids)",
        rh.ITEM_ID_MISMATCH,
        Scope(("text-basic", "tool-call-single", "thinking-with-signature"), frontends=_RESPONSES, streams=_STREAM),
        _w("text-basic", "responses", "anthropic", True),
    ),
    Fault(
        "responses-incomplete-as-completed",
        "An answer cut by max_output_tokens is reported as completed (stream: response.completed carrying an "
        "incomplete response; non-stream: status completed, no incomplete_details).",
        f"codex-rosetta 0.1.0 ({_SCOUT}); open-responses-server 0.4.1 ends a max-tokens cut as completed "
        "(rule: a cut answer is status incomplete, streamed as response.incomplete, so agents continue it).",
        "frontend wire (stream), response side (stop_reason, non-stream)",
        rh.INCOMPLETE_AS_COMPLETED,
        Scope(("max-tokens-length", "incomplete-max-output-tokens"), frontends=_RESPONSES),
        _w("max-tokens-length", "responses", "anthropic", True),
    ),
    Fault(
        "responses-reasoning-items-dropped",
        "Reasoning items are dropped both ways: from the input a client sends back and from the output.",
        "LiteLLM #36197: Responses reasoning items, encrypted_content included, silently dropped for providers "
        "without a native Responses config (Anthropic, Bedrock); converters that map only message and "
        "function_call items (rule: reasoning goes back to the model next turn, and back to the client).",
        "request side (and response side: thinking_present)",
        rh.REASONING_ITEMS_DROPPED,
        Scope(
            ("reasoning-encrypted-roundtrip", "thinking-with-signature", "incomplete-max-output-tokens"),
            frontends=_RESPONSES,
        ),
        _w("reasoning-encrypted-roundtrip", "responses", "anthropic", False),
    ),
    Fault(
        "responses-previous-response-id-dropped",
        "A stored-response continuation goes upstream without its previous_response_id: the new input alone.",
        "Gateways LR16 (LiteLLM without a session database) and CR13 (codex-rosetta's per-request in-memory store) "
        "(docs/gateways.md): the stored turns are not found and the request goes on without them, so the backend "
        "answers a conversation the client never had, and an id no server issued is answered.",
        "request side (chain.history_upstream) and response side (chain.unknown_id_refused)",
        rh.PREVIOUS_RESPONSE_DROPPED,
        Scope(("previous-response-chain",), frontends=_RESPONSES),
        _w("previous-response-chain", "responses", "responses", False),
    ),
)


ISSUE_21_FAULTS: tuple[Fault, ...] = (
    Fault(
        "tool-call-ids-from-name",
        "Tool-call ids sent upstream are made from the function's name, so two calls of one function share one.",
        "gateways A22 (docs/gateways.md): a Gemini frontend that names ids `call_<function>`; the Anthropic and "
        "OpenAI APIs reject duplicate ids, or the second call and its result are lost.",
        "request side (upstream.tool_call_ids_unique)",
        uh.TOOL_IDS_FROM_NAMES,
        Scope(("function-call-outputs-fed-back",)),
        witness("function-call-outputs-fed-back", "openai", "anthropic", False),
    ),
    Fault(
        "fixed-beta-header",
        "A fixed anthropic-beta header is added to every upstream Anthropic request.",
        "issue 21: a gateway that sends its own list of beta flags on every request switches on behaviour no "
        "client asked for (rule: a beta flag travels only when the client sent it).",
        "request side (upstream.headers)",
        uh.FIXED_BETA_HEADER,
        Scope(("text-basic",), backends=("anthropic",)),
        witness("text-basic", "openai", "anthropic", True),
    ),
    Fault(
        "stream-options-forwarded",
        "A client's stream_options is forwarded to the Anthropic API, which rejects unknown fields.",
        "issue 21: stream_options forwarded to api.anthropic.com is answered 400 `stream_options: Extra inputs "
        "are not permitted` (rule: only fields the backend's API documents go upstream).",
        "request side (upstream.unknown_fields)",
        uh.STREAM_OPTIONS_FORWARDED,
        Scope(("text-basic",), backends=("anthropic",), streams=_STREAM),
        witness("text-basic", "openai", "anthropic", True),
    ),
    Fault(
        "created-missing-from-chunks",
        "Chat Completions chunks reach the client without `created`, which OpenAI's spec requires.",
        "issue 21: chunks and bodies without `created` pass the openai Python SDK; a Go, Java or TypeScript client "
        "that validates against the spec rejects them (rule: the answer holds to the frontend protocol's spec).",
        "response side (answer.spec)",
        ah.CREATED_DROPPED,
        Scope(("text-basic",), frontends=("openai",), streams=_STREAM),
        witness("text-basic", "openai", "anthropic", True),
    ),
    Fault(
        "error-in-detail-envelope",
        'An Anthropic client gets its errors as `{"detail": ...}` instead of Anthropic\'s error envelope.',
        'issue 21: an Anthropic client got `{"detail": ...}` from a gateway; the status was right, so the error '
        "passed (rule: an error body holds to the frontend protocol's spec).",
        "response side (answer.spec)",
        ah.ERROR_IN_DETAIL_ENVELOPE,
        Scope(("error-server-500",), frontends=("anthropic",), streams=(False,)),
        witness("error-server-500", "anthropic", "openai", False),
    ),
    Fault(
        "thinking-signature-null",
        "A thinking block reaches Anthropic clients with `signature: null`.",
        "LiteLLM (gateways A26): the anthropic SDK reads null as None; Anthropic's spec says a string, and a typed "
        "client rejects the block (rule: the answer holds to the frontend protocol's spec).",
        "response side (answer.spec)",
        ah.THINKING_SIGNATURE_NULL,
        Scope(("thinking-then-tool",), frontends=("anthropic",), streams=_STREAM),
        witness("thinking-then-tool", "anthropic", "anthropic", True),
    ),
    Fault(
        "error-code-as-integer",
        "An OpenAI client's error carries its `code` as an integer.",
        "Portkey (gateways P7): `error.code` 500, where OpenAI's spec says a string or null; a Go or Java client "
        "that decodes the error object fails on it (rule: an error body holds to the frontend protocol's spec).",
        "response side (answer.spec)",
        ah.ERROR_CODE_AS_INTEGER,
        Scope(("error-server-500",), frontends=("openai",), streams=(False,)),
        witness("error-server-500", "openai", "anthropic", False),
    ),
    Fault(
        "response-fields-missing",
        "Responses objects in the stream lack `parallel_tool_calls` and `tool_choice`.",
        "codex-rosetta (gateways CR11): both are required in a Response; the openai SDK reads on, a typed client "
        "or the Open Responses suite rejects the object (rule: the answer holds to the frontend protocol's spec).",
        "response side (answer.spec)",
        ah.RESPONSE_FIELDS_DROPPED,
        Scope(("text-basic",), frontends=("responses",), streams=_STREAM),
        witness("text-basic", "responses", "anthropic", True),
    ),
    Fault(
        "error-type-null",
        "An error inside an OpenAI stream has `type: null`.",
        "LiteLLM (gateways A27): the error chunk's `error.type` is null, where OpenAI's ErrorObject says a string "
        "(rule: the answer holds to the frontend protocol's spec).",
        "response side (answer.spec)",
        ah.ERROR_TYPE_NULL,
        Scope(("midstream-error",), frontends=("openai",), streams=_STREAM),
        witness("midstream-error", "openai", "anthropic", True),
    ),
    Fault(
        "thinking-start-unsigned",
        "A thinking block opens without `signature` in its content_block_start.",
        "claude-code-router (gateways R13): Anthropic's ThinkingBlock requires `signature` (the real API opens it "
        'with `""` and sends the value in a signature_delta); a typed client rejects the event (rule: the answer '
        "holds to the frontend protocol's spec).",
        "response side (answer.spec)",
        ah.THINKING_START_UNSIGNED,
        Scope(("thinking-then-tool",), frontends=("anthropic",), streams=_STREAM),
        witness("thinking-then-tool", "anthropic", "anthropic", True),
    ),
    Fault(
        "events-unnumbered",
        "Responses stream events after the first carry no `sequence_number`.",
        "LiteLLM /v1/responses (gateways LR15): OpenAI's spec requires `sequence_number` on every event; clients "
        "that order or resume by it cannot (rule: the answer holds to the frontend protocol's spec).",
        "response side (answer.spec, frontend_wire)",
        ah.EVENTS_UNNUMBERED,
        Scope(("text-basic",), frontends=("responses",), streams=_STREAM),
        witness("text-basic", "responses", "anthropic", True),
    ),
)


FAULTS: tuple[Fault, ...] = (*ISSUE_8_FAULTS, *ISSUE_21_FAULTS, *GATEWAY_FAULTS)
"""Every catalogued fault: those of issues 8, 12, 15, 16, 21 and 25, then those found by gating real gateways."""


def by_name(name: str) -> Fault:
    """A fault by name; KeyError names the known ones."""
    for fault in FAULTS:
        if fault.name == name:
            return fault
    names = [f.name for f in FAULTS]
    near = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    raise KeyError(f"no fault named {name!r}{hint}; known: {', '.join(names)}")


def bind_named(name: str, context: HookContext) -> TranslateHooks:
    """The hooks of fault `name` for one request (see `portable_hooks`)."""
    return by_name(name).hooks.bind(context)


def portable_hooks(name: str) -> TranslateHooks:
    """Fault `name`'s hooks by reference: a hook set that looks the fault up for each request, so it pickles to
    worker processes (the catalogue's own hooks are closures and lambdas, which do not); KeyError as `by_name`."""
    by_name(name)
    return TranslateHooks(per_request=functools.partial(bind_named, name))


def catalog_hooks() -> Mapping[str, TranslateHooks]:
    """Every fault's hooks by name, for `create_app(hooks=...)`: configs select one with `hooks = "<name>"`."""
    return {fault.name: fault.hooks for fault in FAULTS}
