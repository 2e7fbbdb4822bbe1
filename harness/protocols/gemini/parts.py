"""Gemini `parts` <-> IR content, with the thoughtSignature rule shared by responses, streams and requests.

Gemini has no block boundaries: a stream (or a model turn) is a sequence of parts, and consecutive text parts
are one answer. A part with `"thought": true` is reasoning. So decoding runs a small state machine over the
parts that opens an IR block at the first non-empty text of a kind and closes it when another kind begins.

Where a `thoughtSignature` goes (Gemini puts it on the first part after the thoughts, or on a functionCall
when no thoughts were returned, or on a trailing empty text part):
- on a thought part: it ends that thinking block and becomes its `ThinkingPart.signature`;
- on any other part, while a thinking block is open: it ends that block as its signature;
- otherwise: an empty `ThinkingPart(text="", signature=...)` is synthesized right before the part.
The encoder mirrors this: a ThinkingPart's signature rides on the next text / functionCall / image part, or on
a trailing `{"text": ""}` part when nothing (or another thinking block) follows, so every signature round-trips.

The parts of Gemini's own server-side tools (code execution's `executableCode`, the code the model ran, and
`codeExecutionResult`, its outcome and output; Gemini 3's `toolCall` and `toolResponse` for its built-in tools,
Google Search and File Search) and a file the model generated (an image's `inlineData`) have no IR form in an
answer: each ends the open block and becomes a `ProviderEvent` holding a
chunk of that one part, which only the Gemini stream encoder writes back; a non-streamed response leaves them out
(see `losses`). The text, calls, stop reason and usage around them decode as usual. A `thoughtSignature` on such
a part (Gemini 3 signs its first `executableCode`) is taken off the part into the thinking block it ends, like
any signature, and the encoder puts it back on the part: kept in both, it reached the client twice (a second
thinking block on the text after the code).

A `functionCall` with `willContinue` is one whose arguments Vertex streams in the next parts (`streamed_args`): the
call is emitted whole when it ends; the encoder always writes whole calls.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Sequence
from typing import Any

from harness import ir
from harness.protocols.common import parse_arguments
from harness.protocols.gemini.fields import (
    PROTOCOL,
    EncodeError,
    as_object,
    as_str,
    fail,
    get,
    has,
    opt_bool,
    opt_str,
    spellings,
)
from harness.protocols.gemini.ids import ToolIds
from harness.protocols.gemini.mapping import standard_base64
from harness.protocols.gemini.streamed_args import StreamedCall

# Part fields that describe a part rather than carry its data.
_PART_META = spellings(["thought", "thoughtSignature", "partMetadata", "mediaResolution", "videoMetadata"])
OCTET_STREAM = "application/octet-stream"
"""The `mimeType` of a URL file whose type neither the IR nor its URL says."""
CODE_EXECUTION_PARTS = ("executableCode", "codeExecutionResult", "toolCall", "toolResponse")
"""Parts of Gemini's server-side tools (code execution; Gemini 3's built-in tool calls and their responses, e.g.
`{"toolCall": {"id", "toolType": "FILE_SEARCH"}}`), which the IR has no form for."""
OUTPUT_MEDIA_PARTS = ("inlineData", "fileData")
"""A file the model generated (gemini-2.5-flash-image's `inlineData` image): the IR's answer has no image or file
part, so it is kept like a code-execution part (a provider event in a stream, left out of a body)."""
_CODE_EXECUTION = {
    spelling: name for name in (*CODE_EXECUTION_PARTS, *OUTPUT_MEDIA_PARTS) for spelling in spellings([name])
}
_SIGNATURE = spellings(["thoughtSignature"])


class ContentMachine:
    """Gemini parts of one streamed response or one model turn -> IR block events, one part at a time."""

    def __init__(self, ids: ToolIds, *, turn: int = 0) -> None:
        self._ids = ids
        self._turn = turn
        self._open: str | None = None  # kind of the open block: "text" or "thinking"
        self._index = 0
        self._next = 0
        self.tool_calls = 0
        """Function calls seen so far (their ordinal numbers the synthesized ids)."""
        self._streamed: StreamedCall | None = None  # a call whose arguments are still arriving (streamed_args)

    def part(self, value: Any, where: str) -> list[ir.StreamEvent]:
        """The events one part adds."""
        part = as_object(value, where)
        sig = opt_str(get(part, "thoughtSignature"), f"{where}.thoughtSignature")
        if has(part, "functionCall"):
            return self.signature(sig) + self._function_call(get(part, "functionCall"), f"{where}.functionCall")
        if has(part, "text"):
            text = as_str(get(part, "text"), f"{where}.text")
            if opt_bool(get(part, "thought"), f"{where}.thought"):
                return self._thought(text, sig)
            out = self.signature(sig)
            return out + self._text(text) if text else out
        data = [key for key in part if key not in _PART_META]
        if data and data[0] in _CODE_EXECUTION:
            return self._code_execution(part, data[0], sig, where)
        if data:
            raise fail(f"{where}: unsupported part {data[0]!r} (the IR has no equivalent in model output)")
        return self.signature(sig)

    def signature(self, sig: str | None) -> list[ir.StreamEvent]:
        """A signature on a non-thought part: it ends the open thinking block, or gets an empty one."""
        if sig is None:
            return []
        out: list[ir.StreamEvent] = []
        if self._open != "thinking":
            out += self.close()
            out += self._start("thinking")
        out.append(ir.ThinkingEnd(index=self._index, signature=sig))
        self._open = None
        return out

    def close(self) -> list[ir.StreamEvent]:
        """Close the open block, if any (a call whose arguments were still streaming ends with what came)."""
        if self._streamed is not None:
            streamed, self._streamed = self._streamed, None
            return self._call(streamed.name, streamed.id, streamed.args)
        if self._open is None:
            return []
        kind, self._open = self._open, None
        if kind == "text":
            return [ir.TextEnd(index=self._index)]
        return [ir.ThinkingEnd(index=self._index)]

    def _start(self, kind: str) -> list[ir.StreamEvent]:
        self._index, self._next, self._open = self._next, self._next + 1, kind
        if kind == "text":
            return [ir.TextStart(index=self._index)]
        return [ir.ThinkingStart(index=self._index)]

    def _thought(self, text: str, sig: str | None) -> list[ir.StreamEvent]:
        if not text and sig is None:
            return []
        out: list[ir.StreamEvent] = []
        if self._open != "thinking":
            out += self.close()
            out += self._start("thinking")
        if text:
            out.append(ir.delta("thinking", self._index, text))
        if sig is not None:
            out.append(ir.ThinkingEnd(index=self._index, signature=sig))
            self._open = None
        return out

    def _code_execution(self, part: dict[str, Any], key: str, sig: str | None, where: str) -> list[ir.StreamEvent]:
        """A code-execution part: it ends the open block and is kept as a provider event (a chunk of that part)."""
        as_object(get(part, key), f"{where}.{key}")
        out = self.signature(sig) + self.close()
        unsigned = {k: v for k, v in part.items() if k not in _SIGNATURE}  # the signature is the block's now
        chunk = {"candidates": [{"content": {"parts": [unsigned], "role": "model"}, "index": 0}]}
        return [*out, ir.ProviderEvent(protocol=PROTOCOL, type=_CODE_EXECUTION[key], data=chunk)]

    def _text(self, text: str) -> list[ir.StreamEvent]:
        out: list[ir.StreamEvent] = []
        if self._open != "text":
            out += self.close()
            out += self._start("text")
        out.append(ir.delta("text", self._index, text))
        return out

    def _function_call(self, value: Any, where: str) -> list[ir.StreamEvent]:
        call = as_object(value, where)
        more = opt_bool(get(call, "willContinue"), f"{where}.willContinue")
        if self._streamed is None and more:  # Vertex streams this call's arguments (streamed_args)
            out = self.close()
            name, call_id = as_str(get(call, "name"), f"{where}.name"), opt_str(get(call, "id"), f"{where}.id")
            self._streamed = StreamedCall(name, call_id)
            self._streamed.add(call, where)
            return out
        if self._streamed is not None:
            self._streamed.add(call, where)
            return [] if more else self.close()
        name = as_str(get(call, "name"), f"{where}.name")
        args = get(call, "args")
        args = {} if args is None else as_object(args, f"{where}.args")
        return self._call(name, opt_str(get(call, "id"), f"{where}.id"), args)

    def _call(self, name: str, call_id: str | None, args: dict[str, Any]) -> list[ir.StreamEvent]:
        # Compact JSON text as str: no UTF-8 round here, so odd strings (lone surrogates) still decode.
        args_json = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
        explicit = call_id is not None
        if call_id is None:
            call_id = self._ids.implied(self._turn, self.tool_calls, name, args)
        self._ids.use(call_id, name, explicit=explicit)
        self.tool_calls += 1
        out = self.close()
        index, self._next = self._next, self._next + 1
        return [
            *out,
            ir.ToolCallStart(index=index, id=call_id, name=name),
            ir.ToolCallDelta(index=index, arguments=args_json),
            ir.ToolCallEnd(index=index),
        ]


class PartsFold:
    """IR block events (as ContentMachine emits them: one block at a time) -> content parts."""

    def __init__(self) -> None:
        self.parts: list[ir.TextPart | ir.ThinkingPart | ir.ToolCallPart] = []
        """The parts completed so far."""
        self._buf: list[str] = []
        self._call = ("", "")

    def add(self, events: Sequence[ir.StreamEvent]) -> None:
        """Fold more events in."""
        for event in events:
            match event:
                case ir.TextStart() | ir.ThinkingStart():
                    self._buf = []
                case ir.ToolCallStart():
                    self._buf, self._call = [], (event.id, event.name)
                case ir.TextDelta() | ir.ThinkingDelta():
                    self._buf.append(event.text)
                case ir.ToolCallDelta():
                    self._buf.append(event.arguments)
                case ir.TextEnd():
                    self.parts.append(ir.TextPart(text="".join(self._buf)))
                case ir.ThinkingEnd():
                    self.parts.append(ir.ThinkingPart(text="".join(self._buf), signature=event.signature))
                case ir.ToolCallEnd():
                    raw = "".join(self._buf)
                    call_id, name = self._call
                    self.parts.append(
                        ir.ToolCallPart(id=call_id, name=name, arguments=parse_arguments(raw), arguments_raw=raw)
                    )


def decode_media(part: dict[str, Any], where: str) -> ir.ImagePart | ir.FilePart | None:
    """The image or file of an `inlineData` / `fileData` part, None for other parts: inline data whose
    `mimeType` is not `image/*` (a PDF, plain text, audio) is a file part; so is a `fileData` URI whose
    `mimeType` (else the type its URL names) is known and not `image/*`: a URL file, with the `mimeType` as sent
    (None when none was). Any other `fileData` is a URL image."""
    image = decode_image(part, where)
    if image is not None and isinstance(image.source, ir.Base64Image):
        source = image.source
        if not source.media_type.startswith("image/"):
            return ir.FilePart(media_type=source.media_type, data=source.data)
    if image is not None and isinstance(image.source, ir.UrlImage):
        file = as_object(get(part, "fileData"), f"{where}.fileData")
        sent = get(file, "mimeType")
        media = sent if isinstance(sent, str) else mimetypes.guess_type(image.source.url)[0]
        if media is not None and not media.startswith("image/"):
            return ir.FilePart(url=image.source.url, media_type=sent if isinstance(sent, str) else None)
    return image


def decode_image(part: dict[str, Any], where: str) -> ir.ImagePart | None:
    """The image of an `inlineData` / `fileData` part, None for other parts. Any media type is carried, for a
    functionResponse's parts (whose IR content holds images only): PDFs and audio keep their `mimeType`."""
    if has(part, "inlineData"):
        blob = as_object(get(part, "inlineData"), f"{where}.inlineData")
        media = as_str(get(blob, "mimeType"), f"{where}.inlineData.mimeType")
        data = standard_base64(as_str(get(blob, "data"), f"{where}.inlineData.data"))
        return ir.ImagePart(source=ir.Base64Image(media_type=media, data=data))
    if has(part, "fileData"):
        file = as_object(get(part, "fileData"), f"{where}.fileData")
        return ir.ImagePart(source=ir.UrlImage(url=as_str(get(file, "fileUri"), f"{where}.fileData.fileUri")))
    return None


def encode_image(part: ir.ImagePart) -> dict[str, Any]:
    """An `inlineData` part, or a `fileData` part (mimeType guessed from the URL when it says)."""
    source = part.source
    if isinstance(source, ir.Base64Image):
        return {"inlineData": {"mimeType": source.media_type, "data": source.data}}
    file: dict[str, Any] = {"fileUri": source.url}
    guessed, _ = mimetypes.guess_type(source.url)
    if guessed is not None:
        file["mimeType"] = guessed
    return {"fileData": file}


def encode_file(part: ir.FilePart) -> dict[str, Any]:
    """An `inlineData` part with the file's `mimeType` (Gemini's blob has no name the Gemini API takes); a URL file
    as a `fileData` part, its `mimeType` the file's, else guessed from the URL, else `application/octet-stream`
    (the API needs one to read a URL). A stored file's id is another provider's (no file_id capability): refused."""
    if part.url is not None:
        media = part.media_type or mimetypes.guess_type(part.url)[0] or OCTET_STREAM
        return {"fileData": {"fileUri": part.url, "mimeType": media}}
    if part.data is None:
        raise EncodeError(f"a file by file_id ({part.file_id}) names another provider's stored file")
    return {"inlineData": {"mimeType": part.media_type, "data": part.data}}


def function_call(part: ir.ToolCallPart, ids: ToolIds, *, turn: int, ordinal: int) -> dict[str, Any]:
    """A `functionCall` object; `id` only when it differs from the one the decoder would synthesize."""
    if not isinstance(part.arguments, dict):
        raise EncodeError(
            f"tool call {part.name!r} ({part.id}): Gemini needs the arguments as a JSON object, "
            f"got {part.arguments_raw!r}"
        )
    call: dict[str, Any] = {"name": part.name, "args": part.arguments}
    if part.id != ids.implied(turn, ordinal, part.name, part.arguments):
        call["id"] = part.id
    ids.use(part.id, part.name, explicit="id" in call)
    return call


def encode_parts(content: Sequence[ir.ContentPart], ids: ToolIds, *, turn: int = 0) -> list[dict[str, Any]]:
    """Model-side IR parts -> Gemini parts (redacted thinking has no Gemini form and is left out)."""
    out: list[dict[str, Any]] = []
    pending: str | None = None  # a signature waiting for the next non-thought part
    ordinal = 0
    for part in content:
        item: dict[str, Any]
        if isinstance(part, ir.ThinkingPart):
            if pending is not None:
                out.append({"text": "", "thoughtSignature": pending})
            if part.text:
                out.append({"text": part.text, "thought": True})
            pending = part.signature
            continue
        if isinstance(part, ir.TextPart):
            if not part.text:
                continue
            item = {"text": part.text}
        elif isinstance(part, ir.ToolCallPart):
            item = {"functionCall": function_call(part, ids, turn=turn, ordinal=ordinal)}
            ordinal += 1
        elif isinstance(part, ir.ImagePart):
            item = encode_image(part)
        elif isinstance(part, ir.FilePart):
            item = encode_file(part)
        elif isinstance(part, ir.RedactedThinkingPart):
            continue
        else:
            raise EncodeError(f"a {part.kind} part cannot be part of a model turn")
        if pending is not None:
            item["thoughtSignature"], pending = pending, None
        out.append(item)
    if pending is not None:
        out.append({"text": "", "thoughtSignature": pending})
    return out
