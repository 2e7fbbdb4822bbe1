"""Content blocks <-> IR parts, shared by requests (messages) and responses (content).

Blocks with no IR part (server_tool_use, web_search_tool_result and the other server-tool results, documents by
file id or content blocks, search_result, container_upload, images by file id, ...) decode to None: the
caller leaves them out of the IR and, for requests, keeps the raw wire messages in `provider_fields` (see
request.py).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols.anthropic.mapping import READ, dumps


def _image(block: Mapping[str, Any], where: str) -> ir.ImagePart | None:
    source = READ.need_obj(block, "source", where)
    source_type = source.get("type")
    if source_type == "base64":
        return ir.ImagePart(
            source=ir.Base64Image(
                media_type=READ.need_str(source, "media_type", f"{where}.source"),
                data=READ.need_str(source, "data", f"{where}.source"),
            )
        )
    if source_type == "url":
        return ir.ImagePart(source=ir.UrlImage(url=READ.need_str(source, "url", f"{where}.source")))
    return None  # file-id images have no IR source


def _document(block: Mapping[str, Any], where: str) -> ir.FilePart | None:
    """A `document` block given inline (a base64 PDF, or plain text: `source.type` "text", the text itself, carried
    base64-encoded in the IR) or by URL (`source.type` "url", no media type on the wire). Its title, context and
    citations settings have no IR field (requests keep the raw block, see request.py); a file id (Anthropic's own
    Files, meaningless to another provider) and content blocks have no IR form."""
    source = READ.need_obj(block, "source", where)
    source_type = source.get("type")
    media_type = READ.need_str(source, "media_type", f"{where}.source") if source_type in ("base64", "text") else ""
    if source_type == "base64":
        return ir.FilePart(media_type=media_type, data=READ.need_str(source, "data", f"{where}.source"))
    if source_type == "text":
        text = READ.need_str(source, "data", f"{where}.source")
        return ir.FilePart(media_type=media_type, data=base64.b64encode(text.encode()).decode("ascii"))
    if source_type == "url":
        return ir.FilePart(url=READ.need_str(source, "url", f"{where}.source"))
    return None  # documents by file id or content blocks have no IR form


def _document_block(part: ir.FilePart) -> dict[str, Any]:
    """A `document` block: a URL as a URL source, plain text as a text source (when its bytes are UTF-8), anything
    else as a base64 source (the API takes PDFs only there). A stored file's id is another provider's (the planner
    never sends one here: no file_id capability), so it is refused, not sent."""
    if part.url is not None:
        return {"type": "document", "source": {"type": "url", "url": part.url}}
    if part.data is None:
        raise ValueError(f"a document by file_id ({part.file_id}) names another provider's stored file")
    if part.media_type == "text/plain":
        try:
            text = base64.b64decode(part.data, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            pass  # not UTF-8 text after all: the base64 form, which the API will judge
        else:
            return {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
    return {"type": "document", "source": {"type": "base64", "media_type": part.media_type, "data": part.data}}


def tool_call(block: Mapping[str, Any], where: str) -> ir.ToolCallPart:
    """A `tool_use` block as an IR tool call; the input object is re-serialized compactly as the raw text."""
    arguments = block.get("input", {})
    return ir.ToolCallPart(
        id=READ.need_str(block, "id", where),
        name=READ.need_str(block, "name", where),
        arguments=arguments,
        arguments_raw=dumps(arguments),
    )


def _tool_result(block: Mapping[str, Any], where: str, names: Mapping[str, str]) -> ir.ToolResultPart:
    call_id = READ.need_str(block, "tool_use_id", where)
    content = block.get("content")
    parts: list[ir.TextPart | ir.ImagePart] = []
    if isinstance(content, str):
        parts.append(ir.TextPart(text=content))
    else:
        for j, item in enumerate(READ.get_list(block, "content", where)):
            part = part_from_block(READ.as_obj(item, f"{where}.content[{j}]"), f"{where}.content[{j}]", names)
            if isinstance(part, ir.TextPart | ir.ImagePart):
                parts.append(part)
            # other kinds inside a tool result (document, search_result) have no IR form
    is_error = READ.get_bool(block, "is_error", where) or False
    # The wire has no tool name on a result: recover it from the assistant's tool_use with the same id.
    return ir.ToolResultPart(tool_call_id=call_id, name=names.get(call_id), content=parts, is_error=is_error)


def part_from_block(block: Mapping[str, Any], where: str, names: Mapping[str, str]) -> ir.ContentPart | None:
    """The IR part of one content block, or None for a block type the IR has no part for.

    `names` maps tool_use ids seen so far to tool names, to fill `ToolResultPart.name`.
    """
    block_type = READ.need_str(block, "type", where)
    if block_type == "text":
        return ir.TextPart(text=READ.need_str(block, "text", where))
    if block_type == "image":
        return _image(block, where)
    if block_type == "document":
        return _document(block, where)
    if block_type == "tool_use":
        return tool_call(block, where)
    if block_type == "tool_result":
        return _tool_result(block, where, names)
    if block_type == "thinking":
        signature = READ.get_str(block, "signature", where)
        return ir.ThinkingPart(text=READ.need_str(block, "thinking", where), signature=signature or None)
    if block_type == "redacted_thinking":
        return ir.RedactedThinkingPart(data=READ.need_str(block, "data", where))
    return None


def _tool_result_block(part: ir.ToolResultPart) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.tool_call_id}
    if len(part.content) == 1 and isinstance(part.content[0], ir.TextPart):
        block["content"] = part.content[0].text  # the common string shorthand
    elif part.content:
        block["content"] = [block_from_part(p) for p in part.content]
    if part.is_error:
        block["is_error"] = True
    return block


def block_from_part(part: ir.ContentPart) -> dict[str, Any]:
    """The wire content block of one IR part."""
    if isinstance(part, ir.TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ir.ImagePart):
        if isinstance(part.source, ir.Base64Image):
            source = {"type": "base64", "media_type": part.source.media_type, "data": part.source.data}
        else:
            source = {"type": "url", "url": part.source.url}
        return {"type": "image", "source": source}
    if isinstance(part, ir.FilePart):
        return _document_block(part)
    if isinstance(part, ir.ToolCallPart):
        # `input` must be an object; arguments that are not one (invalid JSON text) go as {} (see losses).
        arguments = part.arguments if isinstance(part.arguments, dict) else {}
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": arguments}
    if isinstance(part, ir.ToolResultPart):
        return _tool_result_block(part)
    if isinstance(part, ir.ThinkingPart):
        # signature is a required string on the wire; "" stands for "none" and decodes back to None.
        return {"type": "thinking", "thinking": part.text, "signature": part.signature or ""}
    return {"type": "redacted_thinking", "data": part.data}
