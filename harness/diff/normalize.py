"""Normalization rules: small named functions that remove differences which are not translation bugs.

Each rule takes a JSON-ready *view* of what a client saw (`{"response": ..., "events": [...], "error": ...}`)
and returns a new view. Rules never mutate their input. The runner applies `DEFAULT_RULES` to both sides
before comparing; a report names the rules that were applied. A caller that owns its views (a private copy,
changed by nothing else) passes `owned=True` to `apply` and the pair rules: they then change the views in place
instead of copying them again (the comparison pipeline copies each view once per case).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

View = dict[str, Any]
Rule = Callable[[View], View]

# Fields that identify a run rather than describe its content.
_VOLATILE_KEYS = frozenset({"id", "model"})


def _walk(node: Any, fn: Callable[[dict[str, Any]], None]) -> None:
    """`fn` on every dict in `node`, parents before their children (leaves are not visited: most of a view is
    strings and numbers)."""
    if isinstance(node, dict):
        fn(node)
        for value in node.values():
            if isinstance(value, (dict, list)):
                _walk(value, fn)
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, dict):  # `_walk(item, fn)` inlined: a stream is a long list of small dicts
                fn(item)
                for value in item.values():
                    if isinstance(value, (dict, list)):
                        _walk(value, fn)
            elif isinstance(item, list):
                _walk(item, fn)


_LEAVES = frozenset({str, int, float, bool, type(None)})
"""The JSON scalars, by exact type: `json_copy` gives them back as they are."""


def json_copy(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, strings, numbers, None), several times faster than `copy.deepcopy`;
    any other value inside is copied by `copy.deepcopy`."""
    kind = type(value)
    if kind is dict:  # a scalar item is taken as it is here, not through a call (most of a view is scalars)
        return {key: item if type(item) in _LEAVES else json_copy(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _LEAVES else json_copy(item) for item in value]
    if kind in _LEAVES:
        return value
    return copy.deepcopy(value)


# Each rule is a public function that copies its input and an in-place body that changes the copy. `apply` copies
# a view once and runs the bodies of the built-in rules on that copy: each rule deep-copying the whole view again
# made normalization the cost of a compare (a 10k-event view was copied five times before coalescing shrank it).


def response_ids(view: View) -> View:
    """Response and message ids differ per provider and per run: replace them with a placeholder."""
    return _response_ids(json_copy(view))


def _response_ids(out: View) -> View:
    for node in (out.get("response"), *[e for e in out.get("events") or [] if e.get("kind") == "message_start"]):
        if isinstance(node, dict) and "id" in node:
            node["id"] = "<id>"
    return out


def model_names(view: View) -> View:
    """The proxy maps model names between protocols: compare content, not names."""
    return _model_names(json_copy(view))


def _model_names(out: View) -> View:
    for node in (out.get("response"), *[e for e in out.get("events") or [] if e.get("kind") == "message_start"]):
        if isinstance(node, dict) and "model" in node:
            node["model"] = "<model>"
    return out


def tool_call_ids(view: View) -> View:
    """Tool-call ids are provider-specific or synthesized: number them by first appearance instead."""
    return _tool_call_ids(json_copy(view))


def _tool_call_ids(out: View) -> View:
    seen: dict[str, str] = {}

    def fix(node: dict[str, Any]) -> None:
        if node.get("kind") in ("tool_call", "tool_call_start") and isinstance(node.get("id"), str):
            node["id"] = seen.setdefault(node["id"], f"<call:{len(seen)}>")
        if isinstance(node.get("tool_call_id"), str):
            node["tool_call_id"] = seen.setdefault(node["tool_call_id"], f"<call:{len(seen)}>")

    _walk(out, fix)
    return out


def stop_reason_raw(view: View) -> View:
    """The provider's raw stop value differs by protocol; the IR kind is what must agree."""
    return _stop_reason_raw(json_copy(view))


def _stop_reason_raw(out: View) -> View:
    def fix(node: dict[str, Any]) -> None:
        reason = node.get("stop_reason")
        if isinstance(reason, dict):
            reason.pop("raw", None)

    _walk(out, fix)
    return out


REPORTED = "<reported>"
"""What `start_usage_reported` puts in place of a positive input count at stream start."""


def start_usage_reported(view: View) -> View:
    """The usage at stream start is an early report: a provider that knows the input count sends it (Anthropic's
    message_start), a translation whose upstream reports it only at the end must estimate it. So the start's
    input count is compared as reported (positive: `<reported>`) or not (0, or no count), and its other figures
    not at all; the exact counts are compared in the final usage. A client that reads 0 there (an agent sizing
    its context) is misled, so 0 against a reported count is a divergence. A stream cut off by an error has no
    final usage: its accumulated input count is what the start said, and is compared the same way."""
    return _start_usage_reported(json_copy(view))


START_INPUT = "start_input_tokens"
"""The key of a message_start whose usage `start_usage_reported` has classed (not an IR field, so no loss key
removes it: a backend that cannot carry start usage does not excuse a frontend from reporting it)."""


def _reported(usage: Any) -> Any:
    count = usage.get("input_tokens") if isinstance(usage, dict) else None
    if count == REPORTED or (isinstance(count, int) and count > 0):
        return REPORTED
    return count


def _start_usage_reported(out: View) -> View:
    events = out.get("events")
    if not isinstance(events, list):
        return out
    for event in events:
        if event.get("kind") == "message_start" and "usage" in event:
            event[START_INPUT] = _reported(event.pop("usage"))
    response = out.get("response")
    cut = bool(events) and events[-1].get("kind") == "error"
    if cut and isinstance(response, dict) and isinstance(response.get("usage"), dict):
        usage = response["usage"]
        if isinstance(usage.get("input_tokens"), int) and usage["input_tokens"] > 0:
            usage["input_tokens"] = REPORTED
    return out


def failed_before_content(view: View) -> View:
    """A stream that failed before any content says only its error: whether the client saw the message start
    first (an upstream that opened the message) or nothing at all (one that failed right away, like Bedrock's
    lone exception frame) is not the proxy's doing, and the empty answer accumulated from it is no answer."""
    return _failed_before_content(json_copy(view))


def _failed_before_content(out: View) -> View:
    events = out.get("events")
    if out.get("error") is None or not isinstance(events, list):
        return out
    if any(e.get("kind") not in ("message_start", "usage", "error") for e in events):
        return out
    out["events"] = None
    out["response"] = None
    return out


def empty_text_blocks(view: View) -> View:
    """An empty text block says nothing, and some wires cannot carry one (a Gemini or Ollama turn is a run of parts
    with no block boundaries): empty text parts and blocks are dropped, and when one was, the blocks after it are
    numbered again in order (block indexes are otherwise compared as sent)."""
    return _empty_text_blocks(json_copy(view))


def _empty_text_blocks(out: View) -> View:
    response = out.get("response")
    if isinstance(response, dict) and isinstance(response.get("content"), list):
        response["content"] = [p for p in response["content"] if not (p.get("kind") == "text" and p.get("text") == "")]
    events = out.get("events")
    if not isinstance(events, list):
        return out
    said = {e.get("index") for e in events if e.get("kind") == "text_delta" and e.get("text")}
    return _without_blocks(out, events, "text_", said)


def _without_blocks(out: View, events: list[Any], prefix: str, said: set[Any]) -> View:
    """`out` with the events of every block of kind `prefix` (`text_`, `thinking_`) that started but said nothing
    (its index not in `said`) left out, and the later blocks numbered again in order."""
    empty = {e.get("index") for e in events if e.get("kind") == f"{prefix}start"} - said
    if not empty:
        return out
    kept = [e for e in events if not (e.get("kind", "").startswith(prefix) and e.get("index") in empty)]
    order: dict[Any, int] = {}
    for event in kept:
        if "index" in event:
            event["index"] = order.setdefault(event["index"], len(order))
    out["events"] = kept
    return out


def _says_nothing(part: dict[str, Any]) -> bool:
    return part.get("kind") == "thinking" and not part.get("text") and not part.get("signature")


def _empty_thinking(out: View) -> View:
    response = out.get("response")
    if isinstance(response, dict) and isinstance(response.get("content"), list):
        response["content"] = [p for p in response["content"] if not (isinstance(p, dict) and _says_nothing(p))]
    events = out.get("events")
    if not isinstance(events, list):
        return out
    said = {e.get("index") for e in events if e.get("kind") == "thinking_delta" and e.get("text")}
    said |= {e.get("index") for e in events if e.get("kind") == "thinking_end" and e.get("signature")}
    return _without_blocks(out, events, "thinking_", said)


def empty_thinking_pair(reference: View, compared: View, *, owned: bool = False) -> tuple[View, View]:
    """A thinking block with no text and no signature says nothing. It is what is left of a signature-only block
    (Gemini's `thoughtSignature` on a functionCall, Anthropic's thinking with hidden text) once a wire on the way
    that cannot carry signatures lost it (its losses declare `ThinkingPart.signature`): a translation through that
    wire has no block at all, so both runs lose theirs when the reference has one (the blocks after it numbered
    again); one only the proxy's answer has stays compared."""
    if not _has_empty_thinking(reference):
        return reference, compared
    if not owned:
        reference, compared = json_copy(reference), json_copy(compared)
    return _empty_thinking(reference), _empty_thinking(compared)


def _has_empty_thinking(view: View) -> bool:
    """Whether `_empty_thinking` would change the view (a part or a block it leaves out)."""
    response = view.get("response")
    content = response.get("content") if isinstance(response, dict) else None
    if isinstance(content, list) and any(isinstance(p, dict) and _says_nothing(p) for p in content):
        return True
    events = view.get("events")
    if not isinstance(events, list):
        return False
    said = {e.get("index") for e in events if e.get("kind") == "thinking_delta" and e.get("text")}
    said |= {e.get("index") for e in events if e.get("kind") == "thinking_end" and e.get("signature")}
    return bool({e.get("index") for e in events if e.get("kind") == "thinking_start"} - said)


def text_runs_joined(view: View) -> View:
    """Adjacent text blocks as one, for a comparison where a wire on the way has no text block boundaries
    (`ProtocolFacts.text_runs_joined`): adjacent text parts joined, and a text block that opens right after another
    one closed (usage and provider events between them aside) continued in it; the blocks after it numbered again
    in order. A dropped or changed text still differs."""
    return _text_runs_joined(json_copy(view))


def _text_runs_joined(out: View) -> View:
    response = out.get("response")
    if isinstance(response, dict) and isinstance(response.get("content"), list):
        joined: list[Any] = []
        for part in response["content"]:
            last = joined[-1] if joined else None
            if isinstance(last, dict) and isinstance(part, dict) and last.get("kind") == part.get("kind") == "text":
                last["text"] = str(last.get("text", "")) + str(part.get("text", ""))
                continue
            joined.append(part)
        response["content"] = joined
    events = out.get("events")
    if not isinstance(events, list):
        return out
    kept: list[dict[str, Any]] = []
    alias: dict[Any, Any] = {}
    for event in events:
        kind = event.get("kind")
        if kind == "text_start":
            last = next((e for e in reversed(kept) if e.get("kind") not in ("usage", "provider_event")), None)
            if last is not None and last.get("kind") == "text_end":
                kept.remove(last)
                alias[event.get("index")] = last.get("index")
                continue
        if kind in ("text_delta", "text_end") and event.get("index") in alias:
            event["index"] = alias[event["index"]]
        kept.append(event)
    if alias:
        order: dict[Any, int] = {}
        for event in kept:
            if "index" in event:
                event["index"] = order.setdefault(event["index"], len(order))
    out["events"] = kept
    return out


def has_empty_text(view: View) -> bool:
    """Whether the view holds an empty text part or a text block that says nothing (what `empty_text_blocks`
    leaves out)."""
    response = view.get("response")
    content = response.get("content") if isinstance(response, dict) else None
    if isinstance(content, list) and any(p.get("kind") == "text" and p.get("text") == "" for p in content):
        return True
    events = view.get("events")
    if not isinstance(events, list):
        return False
    said = {e.get("index") for e in events if e.get("kind") == "text_delta" and e.get("text")}
    return bool({e.get("index") for e in events if e.get("kind") == "text_start"} - said)


def empty_text_pair(reference: View, compared: View, *, owned: bool = False) -> tuple[View, View]:
    """`empty_text_blocks` between two runs: a translation may lose an empty text block the reference had (a wire
    with no block boundaries cannot carry it), so both lose theirs then; one the reference did not have is the
    proxy's own addition and stays compared (an Anthropic client that sends it back gets a 400)."""
    if not has_empty_text(reference):
        return reference, compared
    if not owned:
        reference, compared = json_copy(reference), json_copy(compared)
    return _empty_text_blocks(reference), _empty_text_blocks(compared)


def coalesce_deltas(view: View) -> View:
    """Chunking differs legitimately between protocols: join consecutive deltas of one block and drop usage
    events (usage is compared on the accumulated response; the start's by `start_usage_reported`)."""
    return _coalesce_deltas(json_copy(view))


DELTA_FIELDS = {"text_delta": "text", "thinking_delta": "text", "tool_call_delta": "arguments"}
"""The field a delta event of each kind adds to its block."""


def _coalesce_deltas(out: View) -> View:
    events = out.get("events")
    if not isinstance(events, list):
        return out
    out["events"] = _joined(events, usage=False)
    return out


def delta_runs_joined(out: View) -> View:
    """The view, changed in place (the caller owns it), with each run of consecutive deltas of one block (same
    kind and index, nothing between them) as one delta carrying their joined text; every other event kept where
    it is. What `coalesce_deltas` does without dropping usage events: it joins these runs and more, so joining
    them first changes nothing it gives."""
    events = out.get("events")
    if isinstance(events, list):
        out["events"] = _joined(events, usage=True)
    return out


def _joined(events: list[dict[str, Any]], *, usage: bool) -> list[dict[str, Any]]:
    """The events with consecutive deltas of one block joined into the first of them (changed in place), and
    usage events kept or dropped (`usage`; a delta run goes on past a dropped one)."""
    merged: list[dict[str, Any]] = []
    more: list[Any] = []  # what the later deltas of a run add to the last merged event's field, joined once
    for event in events:
        kind = event.get("kind")
        if kind == "usage" and not usage:
            continue
        field = DELTA_FIELDS.get(kind or "")
        last = merged[-1] if merged else None
        if field and last and last.get("kind") == kind and last.get("index") == event.get("index"):
            more.append(event[field])
            continue
        _extend(merged, more)
        merged.append(event)
    _extend(merged, more)
    return merged


def _extend(merged: list[dict[str, Any]], more: list[Any]) -> None:
    """The last merged event's field with `more` added, as `+=` one at a time would (in one join for text)."""
    if not more:
        return
    last = merged[-1]
    field = DELTA_FIELDS[last["kind"]]
    value = last[field]
    if type(value) is str and all(type(piece) is str for piece in more):
        last[field] = "".join([value, *more])
    else:
        for piece in more:
            value += piece
        last[field] = value
    more.clear()


def tool_arguments_text(view: View) -> View:
    """Argument JSON text differs in whitespace, key order and fragmenting between protocols (an empty call may
    send `{}` or nothing): compare the parsed arguments of the accumulated response, not the fragments. `0.0` and
    `0` are one JSON number (a JavaScript gateway parses and writes `{"a":0.0}` as `{"a":0}`): an integral float
    is read as its int."""
    return _tool_arguments_text(json_copy(view))


def _json_number(value: Any) -> Any:
    kind = type(value)
    if kind is float and value.is_integer():
        return int(value)
    if kind is dict:
        return {key: _json_number(item) for key, item in value.items()}
    if kind is list:
        return [_json_number(item) for item in value]
    return value


def _tool_arguments_text(out: View) -> View:
    def fix(node: dict[str, Any]) -> None:
        if node.get("kind") == "tool_call":
            node.pop("arguments_raw", None)
            if "arguments" in node:
                node["arguments"] = _json_number(node["arguments"])

    _walk(out, fix)
    if isinstance(out.get("events"), list):
        out["events"] = [e for e in out["events"] if e.get("kind") != "tool_call_delta"]
    return out


def error_message(view: View) -> View:
    """Each SDK words its exception message differently; kind, status and retry-after are what must carry."""
    return _error_message(json_copy(view))


def _error_message(out: View) -> View:
    error = out.get("error")
    if isinstance(error, dict):
        error.pop("message", None)
        error.pop("code", None)
    for event in out.get("events") or []:
        if event.get("kind") == "error":
            event["error"].pop("message", None)
            event["error"].pop("code", None)
    return out


USAGE_DETAILS = ("cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
"""Usage details a protocol may report as 0 or leave out for the same fact: nothing was cached or reasoned."""


def usage_zero_details(view: View) -> View:
    """A usage detail of 0 and an absent one say the same (no cached, cache-written or reasoning tokens): both
    compare as absent, in the response and in every stream event alike. A nonzero detail is compared as is."""
    return _usage_zero_details(json_copy(view))


def _usage_zero_details(out: View) -> View:
    def fix(node: dict[str, Any]) -> None:
        usage = node.get("usage")
        if isinstance(usage, dict):
            for key in USAGE_DETAILS:
                if usage.get(key) == 0 and type(usage.get(key)) is int:
                    usage[key] = None

    _walk(out, fix)
    return out


OPAQUE = "<present>"
"""What `opaque_signatures` puts in place of a signature a client only passes back."""


def opaque_signatures(view: View) -> View:
    """A signature a frontend's client only passes back (Responses' `encrypted_content`, "opaque and
    non-inspectable" to clients) is the server's own value: a proxy may wrap the upstream's signature in a blob it
    can read back. It is compared by presence: `<present>` for any non-empty value, so a missing one where the
    reference has one still differs. Applied for frontends that declare it (`facts.Frontend.opaque_signatures`)."""
    return _opaque_signatures(json_copy(view))


def _opaque_signatures(out: View) -> View:
    def fix(node: dict[str, Any]) -> None:
        signature = node.get("signature")
        if node.get("kind") in ("thinking", "thinking_end") and isinstance(signature, str) and signature:
            node["signature"] = OPAQUE

    _walk(out, fix)
    return out


def blocks_in_order(view: View) -> View:
    """Each block's events, block after block in the order blocks opened: a stream that keeps several blocks open
    at once (its events name their item, as Responses' `output_index` does) says the same as one that closes
    each before the next. Events of no block (message start, usage, done, error) keep their places. Applied for
    frontends that declare it (`facts.Frontend.concurrent_blocks`), before deltas are coalesced."""
    return _blocks_in_order(json_copy(view))


def _blocks_in_order(out: View) -> View:
    events = out.get("events")
    if not isinstance(events, list):
        return out
    slots = [n for n, event in enumerate(events) if "index" in event]
    order: dict[Any, int] = {}
    for n in slots:
        order.setdefault(events[n]["index"], len(order))
    ranked = sorted(slots, key=lambda n: (order[events[n]["index"]], n))
    moved = [events[n] for n in ranked]
    for slot, event in zip(slots, moved, strict=True):
        events[slot] = event
    return out


DEFAULT_RULES: tuple[Rule, ...] = (
    response_ids,
    model_names,
    tool_call_ids,
    stop_reason_raw,
    start_usage_reported,
    failed_before_content,
    empty_text_blocks,
    coalesce_deltas,
    tool_arguments_text,
    error_message,
    usage_zero_details,
)


_IN_PLACE: tuple[tuple[Rule, Rule], ...] = (
    (response_ids, _response_ids),
    (model_names, _model_names),
    (tool_call_ids, _tool_call_ids),
    (stop_reason_raw, _stop_reason_raw),
    (start_usage_reported, _start_usage_reported),
    (failed_before_content, _failed_before_content),
    (empty_text_blocks, _empty_text_blocks),
    (coalesce_deltas, _coalesce_deltas),
    (tool_arguments_text, _tool_arguments_text),
    (error_message, _error_message),
    (usage_zero_details, _usage_zero_details),
    (opaque_signatures, _opaque_signatures),
    (blocks_in_order, _blocks_in_order),
    (text_runs_joined, _text_runs_joined),
)


USAGE_DETAILS = ("cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
"""Usage figures that count a part of the input or output: 0 and absent both mean "none of it"."""


def usage_details_zero(left: View, right: View, *, owned: bool = False) -> tuple[View, View]:
    """A usage detail (cached or reasoning tokens) that is 0 on one side and absent on the other is one fact, in
    the response's usage and in the stream's final usage alike:
    providers send 0 (OpenAI, Anthropic) or nothing (Gemini leaves zeros out). Every other figure is compared
    wherever either side reports it: a count the baseline has and the translation lacks is a divergence, and
    what a protocol cannot carry at all is its codec's declared loss, removed before this."""
    a, b = (left, right) if owned else (json_copy(left), json_copy(right))
    for view in (a, b):
        usages = [(view.get("response") or {}).get("usage")]
        usages += [e.get("usage") for e in view.get("events") or [] if e.get("kind") == "done"]
        for usage in usages:
            if isinstance(usage, dict):
                for key in USAGE_DETAILS:
                    if usage.get(key) is None and key in usage:
                        usage[key] = 0
    return a, b


def error_first_answered_with_status(left: View, right: View, *, owned: bool = False) -> tuple[View, View]:
    """A stream whose only event is an error (the reference: an SDK stream error, no HTTP status) that the proxy
    answers with that error's HTTP status before committing to a 200 gives the client the same error, and
    earlier: the SDK raises its status error (`rate_limit` for a 429) instead of a stream error. That is what a
    proxy should do (a 200 it cannot take back is the bug), so the status and the exception class are compared as
    the reference's when the error's kind is the same. Not the other way round: a request-level HTTP error sent
    as a 200 stream loses its status (LiteLLM A4). Run after `failed_before_content`, which emptied both answers."""
    a, b = (left, right) if owned else (json_copy(left), json_copy(right))
    ref, got = a.get("error"), b.get("error")
    if not (isinstance(ref, dict) and isinstance(got, dict)) or a.get("exception") != "stream_error":
        return a, b
    answered = ref.get("status") is None and b.get("exception") != "stream_error"  # a status error, raised early
    empty = all(view.get(key) is None for view in (a, b) for key in ("events", "response"))
    if answered and empty and ref.get("kind") == got.get("kind"):
        if "status" in got:  # a declared loss may have removed the status already
            got["status"] = None
        b["exception"] = a["exception"]
    return a, b


def _terminal_error(view: View) -> dict[str, Any] | None:
    events = view.get("events") or []
    if events and events[-1].get("kind") == "error":
        error: dict[str, Any] = events[-1]["error"]
        return error
    return None


def incomplete_stream(left: View, right: View, *, owned: bool = False) -> tuple[View, View]:
    """A stream that ended without its terminal marker (`malformed_stream`, as a client of the provider sees it)
    and a stream the proxy ended with an explicit mid-stream error (no HTTP status) tell the client the same
    thing: the answer is incomplete. Neither is dressed up as a normal stop, which is what must not happen."""
    a, b = (left, right) if owned else (json_copy(left), json_copy(right))
    ea, eb = _terminal_error(a), _terminal_error(b)
    if ea is None or eb is None or "malformed_stream" not in (ea.get("kind"), eb.get("kind")):
        return a, b
    if ea.get("status") is not None or eb.get("status") is not None:
        return a, b
    for view, error in ((a, ea), (b, eb)):
        error.clear()
        error["kind"] = "<incomplete stream>"
        view["error"] = {"kind": "<incomplete stream>"}
        view["exception"] = None
    return a, b


def apply(view: View, rules: Iterable[Rule] = DEFAULT_RULES, *, owned: bool = False) -> View:
    """The view with every rule applied in order. `owned`: the caller owns the view, which the built-in rules then
    change in place (otherwise it is copied once, before the first of them)."""
    private = owned  # whether `view` may be changed in place: the caller's own, or a copy made here
    for rule in rules:
        in_place = _BODIES.get(rule)
        if in_place is None:
            view = rule(view)  # a new view, sharing at most `view`'s data: as private as `view` was
        else:
            view, private = in_place(view if private else json_copy(view)), True
    return view


_BODIES: dict[Rule, Rule] = dict(_IN_PLACE)
