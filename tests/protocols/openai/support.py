"""Helpers shared by the OpenAI Chat Completions tests: corpus access, chunkings, schema checks, and the one
projection of IR values through the codec's `losses` table that every round-trip property uses."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.capture import Interaction, load_interactions
from harness.protocols import Codec, decode_events, registry
from harness.protocols.openai import OpenAICodec, schemas
from harness.protocols.openai.profile import ToolIdHook, same_id
from harness.protocols.openai.profiles import SYSTEM_FOLDED, USAGE_DETAILS
from harness.protocols.openai.response import PLACEHOLDER_ID
from harness.stream import accumulate, validate
from harness.wire.http import HttpRequest, HttpResponse
from harness.wire.sse import SSEDecoder
from tests.conftest import corpus_dir

OPENAI = registry.get("openai")
DEEPSEEK = registry.get("deepseek")
GROQ = registry.get("groq")
PROFILE_CODECS: list[OpenAICodec] = [
    c for c in (registry.get(n) for n in registry.names()) if isinstance(c, OpenAICodec) and c.family == "openai"
]
"""Every registered profile codec (openai, deepseek, groq, mistral, ..., azure)."""


def interactions(folder: str, name: str) -> list[Interaction]:
    """Every interaction of one corpus file (skips when the corpus is absent)."""
    return load_interactions(corpus_dir(folder) / name)


def chunkings(body: bytes) -> dict[str, list[bytes]]:
    """Whole, one byte at a time, and random sizes (deterministic per body)."""
    rng = random.Random(len(body))
    pieces, pos = [], 0
    while pos < len(body):
        n = rng.randint(1, 97)
        pieces.append(body[pos : pos + n])
        pos += n
    return {"whole": [body], "1-byte": [body[i : i + 1] for i in range(len(body))], "random": pieces}


def decode_stream(body: bytes, codec: Codec = OPENAI) -> list[ir.StreamEvent]:
    """The events of a whole streamed body."""
    return decode_events(codec, [body])


def sse_payloads(body: bytes) -> list[Any]:
    """The parsed JSON of every SSE data payload of a body, `[DONE]` left out."""
    decoder = SSEDecoder()
    events = [*decoder.feed(body), *decoder.close()]
    return [json.loads(e.data) for e in events if e.data.strip() != "[DONE]"]


def check_request(request: HttpRequest) -> None:
    """A request body matches the request schema."""
    schemas.validate("Request", json.loads(request.body))


def check_response(response: HttpResponse, codec: Codec = OPENAI) -> None:
    """A non-streamed body matches the response schema, once the profile's own decode hook has put its
    deviations (Mistral content arrays) into OpenAI's shape."""
    body = json.loads(response.body)
    if isinstance(codec, OpenAICodec):
        body = codec.profile.decode_body(body)
    schemas.validate("Response", body)


def _openai_error(error: Any) -> Any:
    """OpenRouter's error object (`{code: <status>, message}`) in OpenAI's shape, for the schema check: the
    official SDK reads only its message, and the decoder maps the numeric code like a status."""
    if isinstance(error, dict) and isinstance(error.get("code"), int) and "type" not in error:
        return {"message": error.get("message"), "type": "error", "code": str(error["code"])}
    return error


def check_error(response: HttpResponse) -> None:
    """An error body matches the error schema (an OpenRouter-style object after `_openai_error`)."""
    body = json.loads(response.body)
    schemas.validate("Error", {**body, "error": _openai_error(body.get("error"))})


def check_stream(body: bytes, codec: Codec = OPENAI) -> None:
    """Every data payload of a streamed body is a chunk or an error object, once the profile's decode hook has
    normalized it (a payload the hook drops, Azure's prompt-filter chunk, has no OpenAI shape to check)."""
    for payload in sse_payloads(body):
        if isinstance(codec, OpenAICodec):
            payload = codec.profile.decode_chunk(payload)
        if payload and "error" in payload:
            payload = {**payload, "error": _openai_error(payload["error"])}
        if payload:
            schemas.validate("StreamPayload", payload)


# --- projection through the losses table ------------------------------------------------------------------


def _merge_adjacent(parts: list[ir.OutputPart]) -> list[ir.OutputPart]:
    out: list[ir.OutputPart] = []
    for part in parts:
        last = out[-1] if out else None
        if isinstance(part, ir.TextPart) and isinstance(last, ir.TextPart):
            out[-1] = ir.TextPart(text=last.text + part.text)
        elif isinstance(part, ir.ThinkingPart) and isinstance(last, ir.ThinkingPart):
            out[-1] = ir.ThinkingPart(text=last.text + part.text, signature=last.signature)
        else:
            out.append(part)
    return out


def _one_message_order(parts: list[ir.OutputPart]) -> list[ir.OutputPart]:
    thinking = "".join(p.text for p in parts if isinstance(p, ir.ThinkingPart))
    text = "".join(p.text for p in parts if isinstance(p, ir.TextPart))
    out: list[ir.OutputPart] = [ir.ThinkingPart(text=thinking)] if thinking else []
    out += [ir.TextPart(text=text)] if text else []
    return out + [p for p in parts if isinstance(p, ir.ToolCallPart)]


def _output_parts(
    parts: list[ir.OutputPart], losses: Mapping[str, str], streamed: bool, rewrite: ToolIdHook
) -> list[ir.OutputPart]:
    parts = _tool_ids(parts, losses, rewrite)
    if "RedactedThinkingPart" in losses:
        parts = [p for p in parts if not isinstance(p, ir.RedactedThinkingPart)]
    if "ThinkingPart.signature" in losses:
        parts = [p.model_copy(update={"signature": None}) if isinstance(p, ir.ThinkingPart) else p for p in parts]
    if "Message.content order" in losses:
        parts = _merge_adjacent(parts) if streamed else _one_message_order(parts)
    return parts


def _stop(stop: ir.StopReason | None, losses: Mapping[str, str]) -> ir.StopReason | None:
    if stop is None:
        return None
    update: dict[str, Any] = {}
    if f"StopReason.kind:{stop.kind}" in losses:
        update["kind"] = "end_turn"  # every uncarried kind travels as finish_reason "stop"
    if "StopReason.raw" in losses:
        update["raw"] = None
    if "StopReason.sequence" in losses:
        update["sequence"] = None
    return stop.model_copy(update=update)


def _usage(usage: ir.Usage, losses: Mapping[str, str]) -> ir.Usage:
    update: dict[str, Any] = {}
    if "Usage.cache_write_tokens" in losses:
        update["cache_write_tokens"] = None
    for name in ("input_tokens", "output_tokens"):
        if f"Usage.{name}:None" in losses and getattr(usage, name) is None:
            update[name] = 0
    if USAGE_DETAILS in losses:
        update["cache_read_tokens"] = usage.cache_read_tokens or 0
        update["reasoning_tokens"] = usage.reasoning_tokens or 0
    return usage.model_copy(update=update)


def _tool_ids(parts: list[Any], losses: Mapping[str, str], rewrite: ToolIdHook) -> list[Any]:
    """Parts with tool-call ids in the form the profile sends (when ids are a declared loss)."""
    if "ToolCallPart.id" not in losses:
        return parts
    out = []
    for p in parts:
        if isinstance(p, ir.ToolCallPart):
            p = p.model_copy(update={"id": rewrite(p.id)})
        elif isinstance(p, ir.ToolResultPart) and "ToolResultPart.tool_call_id" in losses:
            p = p.model_copy(update={"tool_call_id": rewrite(p.tool_call_id)})
        out.append(p)
    return out


def _request_message(message: ir.Message, losses: Mapping[str, str], rewrite: ToolIdHook) -> ir.Message:
    parts = _tool_ids(list(message.content), losses, rewrite)
    if "request.ThinkingPart" in losses:  # responses carry the text (see the key's description)
        parts = [p for p in parts if not isinstance(p, ir.ThinkingPart)]
    elif "Message.content order" in losses:  # sent back in one reasoning field: joined, signatures dropped
        thinking = "".join(p.text for p in parts if isinstance(p, ir.ThinkingPart))
        first = next((i for i, p in enumerate(parts) if isinstance(p, ir.ThinkingPart)), None)
        parts = [p for p in parts if not isinstance(p, ir.ThinkingPart)]
        if first is not None and thinking:
            parts.insert(first, ir.ThinkingPart(text=thinking))
    images = "ImagePart outside user messages" in losses
    if images and message.role != "user":
        parts = [p for p in parts if not isinstance(p, ir.ImagePart)]
    update: dict[str, Any] = {}
    if "ToolResultPart.is_error" in losses:
        update["is_error"] = False
    parts = [
        p.model_copy(update={**update, "content": [c for c in p.content if not (images and c.kind == "image")]})
        if isinstance(p, ir.ToolResultPart)
        else p
        for p in parts
    ]
    if "Message.content order" in losses and message.role == "assistant":
        kinds = ("thinking", "text", "tool_call")
        parts = sorted(parts, key=lambda p: kinds.index(p.kind) if p.kind in kinds else len(kinds))
    return message.model_copy(update={"content": parts})


def _fold_system(request: ir.Request) -> ir.Request:
    """The request as Gemma receives it: the system prompt in front of the first user turn's first text (after
    a blank line), or a user turn of its own when the conversation does not open with a plain user turn."""
    if request.system is None:
        return request
    system, messages = request.system, list(request.messages)
    first = messages[0] if messages else None
    plain_user = first is not None and first.role == "user" and not any(p.kind == "tool_result" for p in first.content)
    if first is None or not plain_user:
        messages.insert(0, ir.Message(role="user", content=[ir.TextPart(text=system)]))
    else:
        parts = list(first.content)
        texts = [i for i, p in enumerate(parts) if isinstance(p, ir.TextPart)]
        if texts:
            text = parts[texts[0]]
            assert isinstance(text, ir.TextPart)
            parts[texts[0]] = ir.TextPart(text=f"{system}\n\n{text.text}")
        elif parts:
            parts.insert(0, ir.TextPart(text=system))
        else:
            parts = [ir.TextPart(text=f"{system}\n\n")]
        messages[0] = first.model_copy(update={"content": parts})
    return request.model_copy(update={"system": None, "messages": messages})


def _request(request: ir.Request, losses: Mapping[str, str], rewrite: ToolIdHook) -> ir.Request:
    if SYSTEM_FOLDED in losses:
        request = _fold_system(request)
    messages = [_request_message(m, losses, rewrite) for m in request.messages]
    if "Message(role=tool)" in losses:
        merged: list[ir.Message] = []
        for m in messages:
            if m.role == "tool" and merged and merged[-1].role == "tool":
                merged[-1] = merged[-1].model_copy(update={"content": [*merged[-1].content, *m.content]})
            else:
                merged.append(m)
        messages = merged
    if "ToolResultPart.name" in losses:
        names: dict[str, str] = {}
        recovered: list[ir.Message] = []
        for m in messages:
            for p in m.content:
                if isinstance(p, ir.ToolCallPart):
                    names[p.id] = p.name
            content = [
                p.model_copy(update={"name": names.get(p.tool_call_id)}) if isinstance(p, ir.ToolResultPart) else p
                for p in m.content
            ]
            recovered.append(m.model_copy(update={"content": content}))
        messages = recovered
    update: dict[str, Any] = {"messages": messages}
    if "Request.thinking" in losses:
        update["thinking"] = None
    elif "ThinkingConfig.budget_tokens" in losses and request.thinking is not None:
        update["thinking"] = request.thinking.model_copy(update={"budget_tokens": None})
    return request.model_copy(update=update)


def _event(event: ir.StreamEvent, losses: Mapping[str, str], rewrite: ToolIdHook) -> ir.StreamEvent | None:
    if isinstance(event, ir.ToolCallStart) and "ToolCallPart.id" in losses:
        return event.model_copy(update={"id": rewrite(event.id)})
    if isinstance(event, ir.RedactedThinking) and "RedactedThinkingPart" in losses:
        return None
    if isinstance(event, ir.ThinkingEnd) and "ThinkingPart.signature" in losses:
        return event.model_copy(update={"signature": None})
    if isinstance(event, ir.Done):
        usage = None if event.usage is None else _usage(event.usage, losses)
        return event.model_copy(update={"stop_reason": _stop(event.stop_reason, losses), "usage": usage})
    return event


def tables(codec: Codec) -> Mapping[str, str]:
    """The codec's `losses` and `reshapes` tables together: the keys `project` is driven by."""
    return {**codec.losses, **getattr(codec, "reshapes", {})}


def project(value: Any, losses: Mapping[str, str], *, streamed: bool = False, tool_ids: ToolIdHook = same_id) -> Any:
    """An IR value as the protocol can carry it: each listed loss (or reshape) blanks or normalizes its field.
    Works on a Request, a Response (`streamed` says whether it went through a stream) and a list of stream
    events. Pass `tables(codec)`, and the profile's tool-id hook when `ToolCallPart.id` is a loss."""
    if isinstance(value, ir.Request):
        return _request(value, losses, tool_ids)
    if isinstance(value, ir.Response):
        return value.model_copy(
            update={
                "content": _output_parts(list(value.content), losses, streamed, tool_ids),
                "stop_reason": _stop(value.stop_reason, losses),
                "usage": _usage(value.usage, losses),
                "id": value.id if value.id is not None or "Response.id" not in losses else PLACEHOLDER_ID,
                "model": value.model if value.model is not None or "Response.model" not in losses else "",
            }
        )
    if isinstance(value, list):
        return [e for e in (_event(ev, losses, tool_ids) for ev in value) if e is not None]
    raise TypeError(f"cannot project {type(value).__name__}")


def coalesce(events: list[ir.StreamEvent]) -> list[ir.StreamEvent]:
    """Events with consecutive deltas of one block joined, so streams chunked differently compare equal."""
    out: list[ir.StreamEvent] = []
    for event in events:
        last = out[-1] if out else None
        if isinstance(event, ir.TextDelta | ir.ThinkingDelta) and type(last) is type(event):
            assert isinstance(last, ir.TextDelta | ir.ThinkingDelta)
            if last.index == event.index:
                out[-1] = last.model_copy(update={"text": last.text + event.text})
                continue
        if isinstance(event, ir.ToolCallDelta) and isinstance(last, ir.ToolCallDelta) and last.index == event.index:
            out[-1] = last.model_copy(update={"arguments": last.arguments + event.arguments})
            continue
        out.append(event)
    return out


def decode_corpus(codec: Codec, folder: str, name: str, index: int = 0) -> tuple[list[ir.StreamEvent], ir.Response]:
    """A recorded stream's events (checked valid and the same in every chunking) and their accumulation."""
    body = interactions(folder, name)[index].response.body
    events = decode_events(codec, [body])
    assert validate(events) == []
    for chunks in chunkings(body).values():
        assert decode_events(codec, chunks) == events
    return events, accumulate(events).response


def joined(response: ir.Response, kind: type[ir.TextPart] | type[ir.ThinkingPart] = ir.TextPart) -> str:
    """The text (or thinking) of a response, its parts joined."""
    return "".join(p.text for p in response.content if isinstance(p, kind))


def chunk_bytes(*chunks: dict[str, Any], done: bool = True) -> bytes:
    """An SSE body of these chunks (each given the usual id/object/model fields unless it sets them)."""
    head = {"id": "chatcmpl-t", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    body = b"".join(f"data: {json.dumps({**head, **c})}\n\n".encode() for c in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


def choice(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """A chunk's `choices` with one delta."""
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
