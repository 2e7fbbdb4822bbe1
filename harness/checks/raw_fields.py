"""The answer's raw fields beyond what the IR carries: the fields the frontend protocol's own encoder writes for
the same answer (it writes what the real provider does, checked against recordings by the shape tests) that the
proxy left out. The request side's raw fields are `harness.checks.upstream`'s (the backend's field table)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from harness.checks.memo import Memo, digest
from harness.checks.registry import Result, Scope, Severity, check
from harness.checks.subject import Subject
from harness.protocols import encode_events, registry
from harness.protocols.wire_schema import AnswerPart, answer_parts, part_payloads
from harness.trace.model import Deviation

RAW_FIELDS = "answer.raw_fields"
SHOWN = 8
"""Missing fields named per run (the message says how many more)."""


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path of a JSON value, list indices as `[*]` (`choices[*].logprobs`)."""
    out: set[str] = set()
    _add_paths(value, prefix, out)
    return out


def _add_paths(value: Any, prefix: str, out: set[str]) -> None:
    """`key_paths` into one set (a set per node, joined on the way up, made it a cost of long streams)."""
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            out.add(path)
            if isinstance(item, (dict, list)):
                _add_paths(item, path, out)
    elif isinstance(value, list):
        inner = f"{prefix}[*]"
        for item in value:
            if isinstance(item, (dict, list)):
                _add_paths(item, inner, out)


MEMO = 20_000
"""Answer parts whose key paths are kept (per process; forgotten all at once when full): a matrix sends the same
payloads again and again."""
_memo: Memo[tuple[str, bytes], tuple[tuple[str, frozenset[str]], ...]] = Memo(MEMO)


def _part_paths(how: str, text: str | bytes) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each payload of one answer part (`answer_parts`) as its group and key paths, remembered by the exact text;
    raises `ValueError` on a text that is no JSON."""

    def find() -> tuple[tuple[str, frozenset[str]], ...]:
        out = []
        for kind, payload in part_payloads(how, text):
            name = payload.get("type") if kind == "event" and isinstance(payload, dict) else None
            out.append((f"{kind} {name}" if isinstance(name, str) else kind, frozenset(key_paths(payload))))
        return tuple(out)

    return _memo.get((how, digest(text)), find)


def _by_kind(parts: Iterable[AnswerPart]) -> dict[str, set[str]]:
    """Key paths per payload kind of some answer parts: the body, or each stream event type (its `type`, else
    `event`)."""
    out: dict[str, set[str]] = {}
    for how, text in parts:
        for group, paths in _part_paths(how, text):
            out.setdefault(group, set()).update(paths)
    return out


def _missing(ours: Sequence[AnswerPart], sent: Sequence[AnswerPart]) -> list[str]:
    """`group: path` for each key path of our encoding's parts that no part of the answer sent of the same group
    has, sorted. A part the answer sent as well (the same text, read the same way: most of a stream our encoder
    and the proxy wrote alike) gives both sides the same paths of the same group, so none of its paths can be
    missing: only our other parts are read (`tests/checks/test_raw_fields.py` holds this to reading them all).
    Raises `ValueError` on a part that is no JSON."""
    had = set(sent)
    wanted, found = _by_kind(part for part in ours if part not in had), _by_kind(sent)
    return sorted(
        f"{group}: {path}" for group, paths in wanted.items() if group in found for path in paths - found[group]
    )


def _framed_alike(ours: Sequence[AnswerPart], sent: Sequence[AnswerPart]) -> bool:
    """Whether a WebSocket mode's frames (`socket` parts) hold our HTTP stream's events (`sse` parts) text for text,
    each text read as the same kind of payload either way: then `_missing` would find nothing (the same texts give
    the same groups and key paths). The frames are never the HTTP stream's bytes (no `event:` lines), so the
    byte-equality shortcut never held for them. A text that is no JSON may be taken as alike, or raise `ValueError`
    as in `_missing`: `_left_out` reports nothing for it either way."""
    return (
        len(ours) == len(sent)
        and all(a == ("sse", b[1]) and b[0] == "socket" for a, b in zip(ours, sent, strict=True))
        and all(_read_alike(text) for _, text in sent)
    )


def _read_alike(text: str | bytes) -> bool:
    """Whether an SSE event's data reads as the same kind of payload as a WebSocket frame and as an HTTP stream's
    event: it does unless it is an event of type `error` (`wire_schema._event_kind`), which a text without
    `error` (spelled out, or with a `\\u` escape) cannot be."""
    if isinstance(text, str) and "error" not in text and "\\u" not in text:
        return True
    return [k for k, _ in part_payloads("sse", text)] == [k for k, _ in part_payloads("socket", text)]


def _expected(subject: Subject, body: bytes, media_type: str) -> tuple[bytes, str]:
    """The frontend codec's own encoding of the answer the client received, decoded: its body and media type."""
    codec = registry.get(subject.client)
    if subject.stream:
        events, error = subject.client_stream
        if error is not None:
            raise ValueError(error)
        # an HTTP stream's encoding: its events are read without a WebSocket mode's framing (`SOCKET_FRAMES`)
        return encode_events(codec, events, request=subject.frontend_request), media_type.split(";", 1)[0]
    response = codec.encode_response(codec.decode_response(body), request=subject.frontend_request)
    return response.body, response.headers.get("content-type", media_type)


@check(
    RAW_FIELDS,
    scope=Scope.ANSWER,
    severity=Severity.DEVIATION,
    translated_only=True,
    why="""The answer carries the fields its provider always writes, also those no IR value holds and no spec
    requires (`logprobs: null` on a Chat choice, `stop_sequence: null` on an Anthropic message, `annotations: []`
    on Responses text): the frontend protocol's own encoder, modelled on the real wire, writes them for the same
    answer, and a client that reads them by key (a typed decoder without defaults) finds nothing. A warning per
    run naming the fields left out.""",
)
def _raw_fields(subject: Subject) -> Iterable[Result]:
    if subject.truncated or subject.frontend_status != 200 or not subject.frontend_chunks:
        return []
    if subject.scenario.kind == "models_list":
        return []
    # Not remembered per answer: what the frontend encoder writes may depend on the client's request, and an
    # answer is seen again only with another request (another backend's model): keyed by both, a main job's
    # memo found nothing again in 8946 answers, while dumping each request for its key cost more than a part
    # of what it saves. Each part's key paths are remembered (`_part_paths`).
    return _left_out(subject, subject.answer_header("content-type") or "")


def _left_out(subject: Subject, media: str) -> list[Deviation]:
    body = subject.frontend_body
    try:
        ours, ours_type = _expected(subject, body, media)
        if ours == body:  # the frontend's own encoding, byte for byte (as a faithful proxy's mostly is)
            return []
        ours_parts = answer_parts(ours, media_type=ours_type, status=200)
        sent_parts = answer_parts(body, media_type=media, status=200)
        if _framed_alike(ours_parts, sent_parts):
            return []
        missing = _missing(ours_parts, sent_parts)
    except ValueError:  # an answer its own decoder cannot read: frontend_wire and the SDK judge that
        return []
    if not missing:
        return []
    more = f" (+{len(missing) - SHOWN} more)" if len(missing) > SHOWN else ""
    message = "left out: " + "; ".join(missing[:SHOWN]) + more
    return [Deviation(rule=RAW_FIELDS, message=re.sub(r"\s+", " ", message))]
