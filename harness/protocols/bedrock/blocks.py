"""Converse content blocks <-> IR parts, shared by requests (messages) and responses (output.message).

A block is a union: an object with exactly one of `text`, `image`, `toolUse`, `toolResult`, `reasoningContent`,
`document`, `video`, `audio`, `cachePoint`, `guardContent`, `citationsContent`, `searchResult`, ... Blocks with
no IR part (documents not given as bytes, videos, cache points, guard content, images in S3, server tool results)
decode to None (documents: documents.py):
the caller leaves them out of the IR and, for requests, keeps the raw wire messages in `provider_fields`.

`reasoningContent.redactedContent` is a blob (base64 in JSON) whose bytes are the model's opaque string: real
Bedrock recordings of Claude carry base64 of Anthropic's `redacted_thinking.data` text. The IR keeps that text,
so a redacted block translates between Bedrock and Anthropic unchanged.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols.bedrock.documents import document_block, file_part
from harness.protocols.bedrock.mapping import READ, image_format, media_type
from harness.protocols.bedrock.mapping import fail as _fail

SERVER_TOOL_USE = "server_tool_use"
"""`toolUse.type` of a call the service ran itself (Nova's code interpreter): no IR tool call."""


def redacted_from_wire(value: Any, where: str) -> str:
    """The IR text of a `redactedContent` blob (base64 of the model's UTF-8 string)."""
    READ.as_str(value, f"{where}.redactedContent")
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError) as exc:
        raise _fail(f"{where}.redactedContent is not base64 of UTF-8 text: {exc}") from None


def redacted_to_wire(data: str) -> str:
    """The `redactedContent` blob of an IR redacted-thinking text."""
    return base64.b64encode(data.encode("utf-8")).decode("ascii")


def _image(block: Mapping[str, Any], where: str) -> ir.ImagePart | None:
    image = READ.need_obj(block, "image", where)
    source = READ.need_obj(image, "source", f"{where}.image")
    if "bytes" not in source:
        return None  # an image in S3 (s3Location) has no IR source
    data = READ.need_str(source, "bytes", f"{where}.image.source")
    return ir.ImagePart(source=ir.Base64Image(media_type=media_type(image.get("format"), f"{where}.image"), data=data))


def tool_call(use: Mapping[str, Any], where: str) -> ir.ToolCallPart:
    """A `toolUse` object as an IR tool call; its input is re-serialized compactly as the raw text."""
    arguments = use.get("input", {})
    return ir.ToolCallPart(
        id=READ.need_str(use, "toolUseId", where),
        name=READ.need_str(use, "name", where),
        arguments=arguments,
        arguments_raw=json.dumps(arguments, ensure_ascii=False, separators=(",", ":")),
    )


def _tool_result(result: Mapping[str, Any], where: str, names: Mapping[str, str]) -> ir.ToolResultPart:
    call_id = READ.need_str(result, "toolUseId", where)
    parts: list[ir.TextPart | ir.ImagePart] = []
    for j, item in enumerate(READ.get_list(result, "content", where)):
        here = f"{where}.content[{j}]"
        item = READ.as_obj(item, here)
        if "text" in item:
            parts.append(ir.TextPart(text=READ.need_str(item, "text", here)))
        elif "json" in item:
            parts.append(ir.TextPart(text=json.dumps(item["json"], ensure_ascii=False, separators=(",", ":"))))
        elif "image" in item and (image := _image(item, here)) is not None:
            parts.append(image)
        # documents, videos and search results inside a tool result have no IR form
    status = READ.get_str(result, "status", where)
    # The wire has no tool name on a result: recover it from the assistant's toolUse with the same id.
    return ir.ToolResultPart(tool_call_id=call_id, name=names.get(call_id), content=parts, is_error=status == "error")


def _reasoning(block: Mapping[str, Any], where: str) -> ir.ThinkingPart | ir.RedactedThinkingPart | None:
    reasoning = READ.need_obj(block, "reasoningContent", where)
    here = f"{where}.reasoningContent"
    if "redactedContent" in reasoning:
        return ir.RedactedThinkingPart(data=redacted_from_wire(reasoning["redactedContent"], here))
    text = READ.get_obj(reasoning, "reasoningText", here)
    if text is None:
        return None
    signature = READ.get_str(text, "signature", f"{here}.reasoningText")
    return ir.ThinkingPart(text=READ.need_str(text, "text", f"{here}.reasoningText"), signature=signature or None)


def part_from_block(block: Mapping[str, Any], where: str, names: Mapping[str, str]) -> ir.ContentPart | None:
    """The IR part of one content block, or None for a block the IR has no part for.

    `names` maps toolUse ids seen so far to tool names, to fill `ToolResultPart.name`.
    """
    if "text" in block:
        return ir.TextPart(text=READ.need_str(block, "text", where))
    if "image" in block:
        return _image(block, where)
    if "document" in block:
        return file_part(block, where)
    if "toolUse" in block:
        use = READ.need_obj(block, "toolUse", where)
        return None if use.get("type") == SERVER_TOOL_USE else tool_call(use, f"{where}.toolUse")
    if "toolResult" in block:
        result = READ.need_obj(block, "toolResult", where)
        if result.get("type") not in (None, "tool_result"):
            return None  # the result of a server tool (Nova's code interpreter)
        return _tool_result(result, f"{where}.toolResult", names)
    if "reasoningContent" in block:
        return _reasoning(block, where)
    return None


def _result_item(part: ir.TextPart | ir.ImagePart) -> dict[str, Any] | None:
    if isinstance(part, ir.TextPart):
        return {"text": part.text}
    return block_from_part(part)


def block_from_part(part: ir.ContentPart) -> dict[str, Any] | None:
    """The wire content block of one IR part; None for an image by URL or a file of a format Converse has no
    document format for, which it cannot take."""
    if isinstance(part, ir.TextPart):
        return {"text": part.text}
    if isinstance(part, ir.ImagePart):
        if not isinstance(part.source, ir.Base64Image):
            return None  # Converse takes image bytes or an S3 location, no URL (see losses)
        return {"image": {"format": image_format(part.source.media_type), "source": {"bytes": part.source.data}}}
    if isinstance(part, ir.FilePart):
        return document_block(part)
    if isinstance(part, ir.ToolCallPart):
        # `input` is a JSON document; arguments that are not valid JSON text (None) go as {} (see losses).
        arguments = part.arguments if part.arguments is not None else {}
        return {"toolUse": {"toolUseId": part.id, "name": part.name, "input": arguments}}
    if isinstance(part, ir.ToolResultPart):
        result: dict[str, Any] = {
            "toolUseId": part.tool_call_id,
            "content": [item for p in part.content if (item := _result_item(p)) is not None],
        }
        if part.is_error:
            result["status"] = "error"
        return {"toolResult": result}
    if isinstance(part, ir.ThinkingPart):
        text: dict[str, Any] = {"text": part.text}
        if part.signature is not None:
            text["signature"] = part.signature
        return {"reasoningContent": {"reasoningText": text}}
    return {"reasoningContent": {"redactedContent": redacted_to_wire(part.data)}}
