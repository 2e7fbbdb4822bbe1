"""Output items (`message`, `reasoning`, `function_call`) <-> IR parts, shared by non-streamed responses, the
final response object of a stream, and the assistant items a client sends back as input.

IR parts group into items the one way both directions agree on: adjacent text parts share one `message` item
(one `output_text` part each); adjacent thinking parts share one `reasoning` item (one `summary_text` each)
until a part with a signature, whose signature is the item's `encrypted_content` and which ends the item; a
redacted thinking part is a `reasoning` item with no summary and only `encrypted_content`; every tool call is
its own `function_call` item (a client-executed call with a `call_type` its own item: `client_calls`). A
reasoning item's full `reasoning_text` content (open-weight models behind Responses servers) is read as thinking
when the item has no summary.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from harness import ir
from harness.protocols import common
from harness.protocols.responses import client_calls, ids
from harness.protocols.responses.reader import JSONDict, Reader

MESSAGE_TEXT_TYPES = ("output_text", "refusal", "input_text")
"""Content part types of a message that carry text (`input_text` only in what clients send)."""


def continues(group: Sequence[ir.ContentPart], part: ir.ContentPart) -> bool:
    """Whether `part` joins the item holding `group` (see the module docstring)."""
    if not group:
        return False
    last = group[-1]
    if isinstance(part, ir.TextPart):
        return isinstance(last, ir.TextPart)
    if isinstance(part, ir.ThinkingPart):
        return isinstance(last, ir.ThinkingPart) and last.signature is None
    return False


def group_parts(parts: Sequence[ir.ContentPart]) -> list[list[ir.ContentPart]]:
    """Parts in item-sized groups, in order."""
    groups: list[list[ir.ContentPart]] = []
    for part in parts:
        if groups and continues(groups[-1], part):
            groups[-1].append(part)
        else:
            groups.append([part])
    return groups


# --- wire -> IR -------------------------------------------------------------------------------------------


def reasoning_parts(r: Reader, item: JSONDict, path: str) -> tuple[list[ir.ContentPart], bool]:
    """The IR parts of a `reasoning` item, and whether they were read from `reasoning_text` content rather than
    the summary. An item with neither text nor encrypted content has no IR form (empty list)."""
    texts = _texts(r, item.get("summary"), f"{path}.summary", "summary_text")
    full = not texts and item.get("content") is not None
    if full:
        texts = _texts(r, item.get("content"), f"{path}.content", "reasoning_text")
    encrypted = r.opt_str(item.get("encrypted_content"), f"{path}.encrypted_content") or None
    parts: list[ir.ContentPart] = [ir.ThinkingPart(text=t) for t in texts]
    if parts:
        parts[-1] = ir.ThinkingPart(text=texts[-1], signature=encrypted)
    elif encrypted is not None:
        parts.append(ir.RedactedThinkingPart(data=encrypted))
    return parts, full


def _texts(r: Reader, value: Any, path: str, kind: str) -> list[str]:
    out = []
    for i, part in enumerate(r.opt_lst(value, path)):
        entry = r.obj(part, f"{path}[{i}]")
        if entry.get("type") != kind:
            r.fail(f"{path}[{i}].type", f"expected {kind!r}, got {entry.get('type')!r}")
        out.append(r.str_(entry.get("text"), f"{path}[{i}].text"))
    return out


def message_texts(r: Reader, content: list[Any], path: str) -> tuple[list[ir.TextPart], bool]:
    """The text parts of an assistant message's content array, and whether one of them is a refusal."""
    parts, refused = [], False
    for i, part in enumerate(content):
        entry = r.obj(part, f"{path}[{i}]")
        kind = entry.get("type")
        if kind not in MESSAGE_TEXT_TYPES:
            r.fail(f"{path}[{i}].type", f"unsupported message content type {kind!r}")
        key = "refusal" if kind == "refusal" else "text"
        refused = refused or kind == "refusal"
        parts.append(ir.TextPart(text=r.str_(entry.get(key), f"{path}[{i}].{key}")))
    return parts, refused


def function_call(r: Reader, item: JSONDict, path: str) -> ir.ToolCallPart:
    """A `function_call` item: the IR call id is its `call_id` (what a `function_call_output` answers)."""
    raw = r.opt_str(item.get("arguments"), f"{path}.arguments") or ""
    return ir.ToolCallPart(
        id=r.str_(item.get("call_id"), f"{path}.call_id"),
        name=r.str_(item.get("name"), f"{path}.name"),
        arguments=common.parse_arguments(raw),
        arguments_raw=raw,
    )


def decode_output(r: Reader, output: list[Any], path: str = "output") -> tuple[list[ir.OutputPart], bool]:
    """IR parts of a response's `output` array, and whether a message was a refusal. Items of hosted tools
    (web search, file search, code interpreter, ...) have no IR form and are skipped; client-executed items
    are tool calls (`client_calls`)."""
    content: list[ir.OutputPart] = []
    refused = False
    for i, value in enumerate(output):
        parts, refusal = decode_item(r, value, f"{path}[{i}]")
        content += parts
        refused = refused or refusal
    return content, refused


def decode_item(r: Reader, value: Any, where: str) -> tuple[list[ir.OutputPart], bool]:
    """IR parts of one output item (none for a hosted tool's item), and whether it is a refusal."""
    item = r.obj(value, where)
    kind = item.get("type")
    if kind == "message":
        texts, refusal = message_texts(r, r.opt_lst(item.get("content"), f"{where}.content"), f"{where}.content")
        return list(texts), refusal
    if kind == "reasoning":
        parts, _ = reasoning_parts(r, item, where)
        return [p for p in parts if isinstance(p, ir.ThinkingPart | ir.RedactedThinkingPart)], False
    if kind == "function_call":
        return [function_call(r, item, where)], False
    if client_calls.is_client_call(item):
        return [client_calls.decode(r, item, where)], False
    if not isinstance(kind, str):
        r.fail(f"{where}.type", "missing item type")
    return [], False


# --- IR -> wire -------------------------------------------------------------------------------------------


def output_text(text: str) -> JSONDict:
    """An `output_text` content part."""
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def refusal(text: str) -> JSONDict:
    """A `refusal` content part."""
    return {"type": "refusal", "refusal": text}


def message_item(
    item_id: str, texts: Sequence[str], status: str = "completed", refusals: Collection[int] = ()
) -> JSONDict:
    """An assistant `message` output item; the parts at `refusals` are refusal parts."""
    content = [refusal(t) if i in refusals else output_text(t) for i, t in enumerate(texts)]
    return {"id": item_id, "type": "message", "status": status, "content": content, "role": "assistant"}


def reasoning_item(item_id: str, summaries: Sequence[str], encrypted: str | None) -> JSONDict:
    """A `reasoning` output item (no status, as the API sends it)."""
    item: JSONDict = {"id": item_id, "type": "reasoning", "summary": [summary_text(s) for s in summaries]}
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


def summary_text(text: str) -> JSONDict:
    """A `summary_text` part of a reasoning item."""
    return {"type": "summary_text", "text": text}


def function_call_item(item_id: str, call: ir.ToolCallPart, status: str = "completed") -> JSONDict:
    """A `function_call` output item."""
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "arguments": call.arguments_raw,
        "call_id": call.id,
        "name": call.name,
    }


def item_id(prefix: str, response_id: str, output_index: int) -> str:
    """The id of output item `output_index` of a response (derived: the IR keeps no item ids). As the API's
    do, it shares the response id's first 26 hex digits (a shard and the creation time) when that id has the
    API's form."""
    own = ids.derived(prefix, response_id, output_index)
    digits = response_id.removeprefix(ids.RESPONSE)
    if response_id.startswith(ids.RESPONSE) and len(digits) == 50 and all(c in "0123456789abcdef" for c in digits):
        return prefix + digits[:26] + own[-24:]
    return own


def encode_output(
    content: Sequence[ir.OutputPart], response_id: str, *, incomplete: bool = False, refused: bool = False
) -> list[JSONDict]:
    """A response's `output` array; the last message item of an incomplete response is `incomplete` too, and the
    text of a `refused` answer is its refusal (a refusal part, as OpenAI sends it)."""
    out: list[JSONDict] = []
    for group in group_parts(content):
        first, at = group[0], len(out)
        if isinstance(first, ir.TextPart):
            texts = [p.text for p in group if isinstance(p, ir.TextPart)]
            refusals = range(len(texts)) if refused else ()
            out.append(message_item(item_id(ids.MESSAGE, response_id, at), texts, refusals=refusals))
        elif isinstance(first, ir.ThinkingPart):
            summaries = [p.text for p in group if isinstance(p, ir.ThinkingPart)]
            signature = group[-1].signature if isinstance(group[-1], ir.ThinkingPart) else None
            out.append(reasoning_item(item_id(ids.REASONING, response_id, at), summaries, signature))
        elif isinstance(first, ir.RedactedThinkingPart):
            out.append(reasoning_item(item_id(ids.REASONING, response_id, at), [], first.data))
        elif isinstance(first, ir.ToolCallPart) and first.call_type is not None:
            prefix = client_calls.PREFIX.get(first.call_type, ids.FUNCTION_CALL)
            out.append(client_calls.item(item_id(prefix, response_id, at), first, "completed"))
        elif isinstance(first, ir.ToolCallPart):
            out.append(function_call_item(item_id(ids.FUNCTION_CALL, response_id, at), first))
    if incomplete and out and out[-1]["type"] == "message":
        out[-1]["status"] = "incomplete"
    return out
