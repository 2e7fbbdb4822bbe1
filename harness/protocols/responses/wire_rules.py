"""What real Responses API streams always do beyond what the `openai` SDK needs to read them: the wire rules a
proxy serving this frontend is held to (`facts.WireRule`; a break is a wire deviation, a warning).

One rule: api.openai.com streams output items one after another (each `response.output_item.done` before the
next `response.output_item.added`), in every stream recorded from it in the shared corpus
(`openai_responses/stream-*.yaml`). Neither OpenAI's streaming reference nor the Open Responses specification
requires it: the specification orders the events of one item (added, its content parts, done), every later event
names its item by `output_index` and `item_id`, and the SDK accumulates by `output_index`. So items streamed
concurrently are a deviation from what the real API does, not a bug: the diff compares each item's events
(`facts.Frontend.concurrent_blocks`), and this rule warns (docs/gateways.md, "Interleaved output items").
"""

from __future__ import annotations

import functools
import json

from harness.protocols.facts import WireRule
from harness.protocols.wire_schema import event_json, sse_data
from harness.wire import FramingError

CORPUS = "corpus openai_responses/stream-text.yaml, stream-function-call.yaml, stream-reasoning-summary.yaml"
REFERENCE = (
    "https://platform.openai.com/docs/api-reference/responses-streaming/response/output_item; "
    "https://www.openresponses.org/specification#items-are-streamable (per-item order only)"
)


@functools.lru_cache(maxsize=2)
def _events(body: bytes) -> tuple[dict[str, object], ...]:
    """The JSON object events of a stream; none when the framing is broken (the codec and the `frontend_wire`
    check judge that). Parsed once for all the rules of one answer (they only read it). Its SSE split is the
    one the answer checks read (`wire_schema.sse_data`)."""
    try:
        events = sse_data(body)
    except FramingError:
        return ()
    out = []
    for text in events:
        try:
            data = event_json(text)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            out.append(data)
    return tuple(out)


def items_one_at_a_time(body: bytes, stream: bool) -> list[str]:
    """No `response.output_item.added` while an earlier output item is still open (added, not yet done)."""
    if not stream:
        return []
    open_items: list[object] = []
    found = []
    for number, event in enumerate(_events(body)):
        kind, index = event.get("type"), event.get("output_index")
        if kind == "response.output_item.added":
            if open_items:
                found.append(f"event {number} adds output item {index} while item(s) {open_items} are open")
            open_items.append(index)
        elif kind == "response.output_item.done" and index in open_items:
            open_items.remove(index)
    return found


def _refused_turn(event: dict[str, object]) -> bool:
    """A WebSocket-mode `error` event carrying the HTTP status of a refused turn (`status`, nested `error`)."""
    return (
        event.get("type") == "error" and isinstance(event.get("status"), int) and isinstance(event.get("error"), dict)
    )


def events_numbered(body: bytes, stream: bool) -> list[str]:
    """Every event carries `sequence_number`. api.openai.com has numbered every event since about April 2025;
    its streams before that numbered none, which the decoder still reads (so a stream that numbers none decodes,
    and only this rule says the API does not send one like it today). A WebSocket-mode `error` event with an HTTP
    `status` (a turn refused before any stream: `ResponseWsError`, whose `sequence_number` is only for "an error
    emitted by the response stream") is no stream event."""
    if not stream:
        return []
    events = _events(body)
    bare = [n for n, event in enumerate(events) if "sequence_number" not in event and not _refused_turn(event)]
    return [f"{len(bare)} of {len(events)} events have no sequence_number (the first: event {bare[0]})"] if bare else []


_TIED = (
    "response.output_text.", "response.refusal.", "response.content_part.", "response.reasoning_summary_",
    "response.reasoning_text.", "response.function_call_arguments.", "response.custom_tool_call_input.",
)  # fmt: skip
"""The event types the decoder ties to their item (others, kept as they came, may name an upstream's item)."""


def ids_kept(body: bytes, stream: bool) -> list[str]:
    """Every event names its output item by the `item_id` its `response.output_item.added` gave (and its
    `output_item.done` carries that id), and every response object of the stream has the id `response.created`
    gave. The decoder ties events by `output_index`, as the SDK does, since GitHub Copilot's endpoint gives every
    event a new id (vercel/ai `github-copilot-id-rotation.1.chunks.txt`); a proxy that does the same breaks
    clients that key an item's parts by its id (vercel/ai before it learnt Copilot's ways): a defect."""
    if not stream:
        return []
    added: dict[object, object] = {}
    first: str | None = None
    count, response_id = 0, None
    for number, event in enumerate(_events(body)):
        kind, index = event.get("type"), event.get("output_index")
        item, response = event.get("item"), event.get("response")
        said, wanted = None, None
        if isinstance(response, dict) and "id" in response:
            response_id = response["id"] if response_id is None else response_id
            said, wanted = response["id"], response_id
        elif kind == "response.output_item.added" and isinstance(item, dict):
            added[index] = item.get("id")
        elif kind == "response.output_item.done" and isinstance(item, dict):
            said, wanted = item.get("id"), added.get(index)
        elif isinstance(kind, str) and kind.startswith(_TIED) and "item_id" in event:
            said, wanted = event["item_id"], added.get(index)
        if wanted is not None and said != wanted:
            count += 1
            first = first or f"event {number} ({kind}) says {said!r} for {wanted!r}"
    if not count:
        return []
    return [f"{count} events name their item or response by another id than it began with (the first: {first})"]


NUMBERED = "https://platform.openai.com/docs/api-reference/responses-streaming (every event: sequence_number)"

EARLIEST_CREATED_AT = 1_741_651_200
"""2025-03-11, the day the Responses API was released: a `created_at` before it is a placeholder, not a time."""
CREATED_AT = "https://platform.openai.com/docs/api-reference/responses/object (created_at: Unix timestamp, seconds)"


def created_at_is_a_time(body: bytes, stream: bool) -> list[str]:
    """Every response object (the body, or each stream event's `response`) has a `created_at` that is a time,
    never the 0 a translating proxy writes when it has no clock of its own. Its absence is the spec check's."""
    if stream:
        objects = [(f"event {n}", event.get("response")) for n, event in enumerate(_events(body))]
    else:
        try:
            objects = [("body", json.loads(body))]
        except (json.JSONDecodeError, UnicodeDecodeError):
            return []
    found = []
    for where, obj in objects:
        created = obj.get("created_at") if isinstance(obj, dict) and obj.get("object") == "response" else None
        # A number, as the reference types it (`openai-go` reads a float64): codex-rosetta's 1795745124.925 is a time.
        is_number = isinstance(created, int | float) and not isinstance(created, bool)
        if created is not None and (not is_number or created < EARLIEST_CREATED_AT):
            found.append(f"{where} has created_at {json.dumps(created)[:40]}")
    return found


PHASE = (
    "https://platform.openai.com/docs/api-reference/responses/object (output message: phase, `commentary` or "
    "`final_answer`); both specs allow null, the API sends a value"
)


def _message_items(body: bytes, stream: bool) -> list[tuple[str, object]]:
    """(where, item) for every output item: the body's `output`, or each event's `item` and `response.output`."""
    if stream:
        events = _events(body)
    else:
        try:
            events = ({"response": json.loads(body)},)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return []
    found: list[tuple[str, object]] = []
    for number, event in enumerate(events):
        where = f"event {number}" if stream else "body"
        response = event.get("response")
        output = response.get("output") if isinstance(response, dict) else None
        found += [(f"{where} output[{i}]", item) for i, item in enumerate(output if isinstance(output, list) else [])]
        if "item" in event:
            found.append((f"{where} item", event["item"]))
    return found


def phase_is_named(body: bytes, stream: bool) -> list[str]:
    """A message item's `phase`, when present, names the phase (`commentary`, `final_answer`): never null. The
    OpenAI and Open Responses specs both let it be null, but api.openai.com sends a value on every message item
    of the models that have phases (every recording in the corpus), and clients that tell a preamble from the
    answer by it (Codex) read null as neither."""
    return [
        f"{where} (message {item.get('id')}) has phase null"
        for where, item in _message_items(body, stream)
        if isinstance(item, dict) and item.get("type") == "message" and "phase" in item and item["phase"] is None
    ]


RULES = (
    WireRule("responses.items_one_at_a_time", f"{REFERENCE}; {CORPUS}", items_one_at_a_time),
    WireRule("responses.events_numbered", f"{NUMBERED}; {CORPUS}", events_numbered),
    WireRule("responses.created_at_is_a_time", f"{CREATED_AT}; {CORPUS}", created_at_is_a_time),
    WireRule("responses.phase_is_named", f"{PHASE}; {CORPUS}", phase_is_named),
    WireRule("responses.ids_kept", f"{REFERENCE}; {CORPUS}", ids_kept, defect=True),
)
"""The wire rules of the Responses API as a frontend."""
