"""IR event transformers between text-embedded Qwen tool calls and structured IR tool calls.

`XmlToolCallDecoder`: IR events in (from a base protocol's decoder), IR events out, with every `<tool_call>`
in text blocks turned into tool_call_start / one delta with the compact arguments JSON / tool_call_end.
`XmlToolCallEncoder`: the reverse, so that a reference Qwen backend can write the calls as text.
Both renumber content indices (a text block splits around the calls it contains, or absorbs them), and
`decode_response` / `encode_response` do the same to whole responses.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness import ir
from harness.protocols import common
from harness.protocols.qwen_xml.scanner import ParsedCall, Segment, XmlToolCallScanner, render_call

ID_PREFIX = "call_"
"""Prefix of synthesized tool-call ids (Qwen's text format has no ids)."""


def call_id(message_id: str | None, ordinal: int, call: ParsedCall) -> str:
    """Deterministic id of the `ordinal`-th text tool call of a message: same reply, same ids, any chunking."""
    return common.synth_tool_id(ID_PREFIX, message_id or "", ordinal, call.name, _raw(call))


def _raw(call: ParsedCall) -> str:
    return common.dump_text(call.arguments)


def _reindex(event: ir.StreamEvent, index: int) -> ir.StreamEvent:
    return event.model_copy(update={"index": index})


class XmlToolCallDecoder:
    """Text tool calls -> structured IR tool calls, one event at a time."""

    def __init__(self, tools: Sequence[ir.Tool] = ()) -> None:
        self._scanner = XmlToolCallScanner(tools)
        self._message_id: str | None = None
        self._next = 0
        self._map: dict[int, int] = {}  # input index -> output index of blocks passed through
        self._text_in: int | None = None  # input index of the text block being scanned
        self._text_out: int | None = None  # output index of the text block open on the output
        self.calls = 0
        """How many tool calls were found in text so far."""

    @property
    def warnings(self) -> list[str]:
        """Malformed or unterminated tool calls that were passed on as text."""
        return self._scanner.warnings

    def feed(self, event: ir.StreamEvent) -> list[ir.StreamEvent]:
        """The events that replace `event`."""
        match event:
            case ir.MessageStart():
                self._message_id = event.id
                return [event]
            case ir.TextStart():
                out = self._end_text()
                self._text_in = event.index
                return out
            case ir.TextDelta() if event.index == self._text_in:
                return self._emit(self._scanner.feed(event.text))
            case ir.TextEnd() if event.index == self._text_in:
                return self._end_text()
            case ir.ThinkingStart() | ir.ToolCallStart() | ir.RedactedThinking():
                self._map[event.index] = self._take()
                return [_reindex(event, self._map[event.index])]
            case ir.ThinkingDelta() | ir.ThinkingEnd() | ir.ToolCallDelta() | ir.ToolCallEnd() | ir.TextDelta():
                return [_reindex(event, self._map.get(event.index, event.index))]
            case ir.TextEnd():
                return [_reindex(event, self._map.get(event.index, event.index))]
            case ir.Done():
                out = self._end_text()
                stop = event.stop_reason
                if self.calls and stop is not None and stop.kind == "end_turn":
                    # The base saw only text and said "stop"; the reply actually asks for tool calls.
                    event = event.model_copy(update={"stop_reason": stop.model_copy(update={"kind": "tool_use"})})
                return [*out, event]
            case ir.ErrorEvent():
                return [*self._end_text(), event]
        return [event]

    def _take(self) -> int:
        self._next += 1
        return self._next - 1

    def _end_text(self) -> list[ir.StreamEvent]:
        if self._text_in is None:
            return []
        out = self._emit(self._scanner.finish())
        self._text_in = None
        return out + self._close_text()

    def _close_text(self) -> list[ir.StreamEvent]:
        if self._text_out is None:
            return []
        index, self._text_out = self._text_out, None
        return [ir.TextEnd(index=index)]

    def _emit(self, segments: list[Segment]) -> list[ir.StreamEvent]:
        out: list[ir.StreamEvent] = []
        for segment in segments:
            if isinstance(segment, str):
                if self._text_out is None:
                    self._text_out = self._take()
                    out.append(ir.TextStart(index=self._text_out))
                out.append(ir.TextDelta(index=self._text_out, text=segment))
                continue
            out += self._close_text()
            index = self._take()
            out += [
                ir.ToolCallStart(index=index, id=call_id(self._message_id, self.calls, segment), name=segment.name),
                ir.ToolCallDelta(index=index, arguments=_raw(segment)),
                ir.ToolCallEnd(index=index),
            ]
            self.calls += 1
        return out


class XmlToolCallEncoder:
    """Structured IR tool calls -> `<tool_call>` text, one event at a time (Hermes JSON or Coder XML body)."""

    def __init__(self, *, style: str = "hermes") -> None:
        if style not in ("hermes", "coder"):
            raise ValueError(f"unknown Qwen tool-call style {style!r}")
        self.style = style
        """Body format of the calls: `hermes` (JSON) or `coder` (Qwen3-Coder XML)."""
        self._next = 0
        self._map: dict[int, int] = {}
        self._text: int | None = None  # output index of the text block that collects text and calls
        self._written = False  # whether that block has content yet
        self._after_call = False
        self._calls: dict[int, tuple[str, list[str]]] = {}
        self.calls = 0
        """How many tool calls were written as text so far."""

    def feed(self, event: ir.StreamEvent) -> list[ir.StreamEvent]:
        """The events that replace `event`."""
        match event:
            case ir.TextStart() | ir.TextEnd():
                return []  # text blocks merge with the calls around them into one output block
            case ir.TextDelta():
                prefix = "\n" if self._after_call else ""
                self._after_call = False
                return self._write(prefix + event.text) if event.text else []
            case ir.ToolCallStart():
                self._calls[event.index] = (event.name, [])
                return []
            case ir.ToolCallDelta() if event.index in self._calls:
                self._calls[event.index][1].append(event.arguments)
                return []
            case ir.ToolCallEnd() if event.index in self._calls:
                return self._call(*self._calls.pop(event.index))
            case ir.ThinkingStart() | ir.RedactedThinking():
                self._map[event.index] = self._take()
                return [*self._close_text(), _reindex(event, self._map[event.index])]
            case ir.ThinkingDelta() | ir.ThinkingEnd():
                return [_reindex(event, self._map.get(event.index, event.index))]
            case ir.Done():
                stop = event.stop_reason
                if self.calls and stop is not None and stop.kind == "tool_use":
                    # A Qwen backend without a tool parser reports a plain stop for text-embedded calls.
                    event = event.model_copy(update={"stop_reason": ir.StopReason(kind="end_turn")})
                return [*self._close_text(), event]
            case ir.ErrorEvent():
                return [*self._close_text(), event]
        return [event]

    def _take(self) -> int:
        self._next += 1
        return self._next - 1

    def _write(self, text: str) -> list[ir.StreamEvent]:
        out: list[ir.StreamEvent] = []
        if self._text is None:
            self._text, self._written = self._take(), False
            out.append(ir.TextStart(index=self._text))
        self._written = True
        out.append(ir.TextDelta(index=self._text, text=text))
        return out

    def _call(self, name: str, fragments: list[str]) -> list[ir.StreamEvent]:
        raw = "".join(fragments)
        arguments = common.parse_arguments(raw)
        if not isinstance(arguments, dict):
            raise ValueError(f"qwen: tool call {name!r} arguments are not a JSON object: {raw!r}")
        # The chat template separates a call from whatever precedes it in the message by one newline.
        lead = "\n" if self._text is not None and self._written else ""
        self._after_call = True
        self.calls += 1
        return self._write(lead + render_call(name, arguments, style=self.style))

    def _close_text(self) -> list[ir.StreamEvent]:
        self._after_call = False
        if self._text is None:
            return []
        index, self._text = self._text, None
        return [ir.TextEnd(index=index)]


def decode_response(response: ir.Response, tools: Sequence[ir.Tool] = ()) -> tuple[ir.Response, list[str]]:
    """A whole response with its text tool calls made structured (same ids as the stream path), and warnings."""
    scanner = XmlToolCallScanner(tools)
    content: list[ir.OutputPart] = []
    calls = 0
    for part in response.content:
        if not isinstance(part, ir.TextPart):
            content.append(part)
            continue
        text_open = False  # the last part appended is text of this part's: a following text segment joins it
        for segment in [*scanner.feed(part.text), *scanner.finish()]:
            if isinstance(segment, str):
                # The scanner holds back a possible tag start ('<') and hands it over as a segment of its own.
                if text_open and isinstance(last := content[-1], ir.TextPart):
                    content[-1] = ir.TextPart(text=last.text + segment)
                else:
                    content.append(ir.TextPart(text=segment))
                text_open = True
                continue
            text_open = False
            tool_id = call_id(response.id, calls, segment)
            content.append(
                ir.ToolCallPart(id=tool_id, name=segment.name, arguments=segment.arguments, arguments_raw=_raw(segment))
            )
            calls += 1
    stop = response.stop_reason
    if calls and stop is not None and stop.kind == "end_turn":
        stop = stop.model_copy(update={"kind": "tool_use"})
    return response.model_copy(update={"content": content, "stop_reason": stop}), scanner.warnings


def encode_response(response: ir.Response, *, style: str = "hermes") -> ir.Response:
    """A whole response with its tool calls written into the text, the way a Qwen model writes them.

    Each run of text and tool-call parts becomes one text part, with exactly the text the stream encoder writes.
    """
    content: list[ir.OutputPart] = []
    encoder: XmlToolCallEncoder | None = None
    for part in response.content:
        if not isinstance(part, ir.TextPart | ir.ToolCallPart):
            encoder = None
            content.append(part)
            continue
        if encoder is None:
            encoder = XmlToolCallEncoder(style=style)
            content.append(ir.TextPart(text=""))
        written = [e for event in _part_events(part) for e in encoder.feed(event)]
        text = "".join(e.text for e in written if isinstance(e, ir.TextDelta))
        last = content[-1]
        assert isinstance(last, ir.TextPart)
        content[-1] = ir.TextPart(text=last.text + text)
    content = [p for p in content if not (isinstance(p, ir.TextPart) and p.text == "")]
    stop = response.stop_reason
    if any(isinstance(p, ir.ToolCallPart) for p in response.content) and stop is not None and stop.kind == "tool_use":
        stop = ir.StopReason(kind="end_turn")
    return response.model_copy(update={"content": content, "stop_reason": stop})


def _part_events(part: ir.TextPart | ir.ToolCallPart) -> list[ir.StreamEvent]:
    if isinstance(part, ir.TextPart):
        return [ir.TextDelta(index=0, text=part.text)]
    raw = part.arguments_raw
    if raw == "" and part.arguments is not None:
        raw = common.dump_text(part.arguments)
    return [
        ir.ToolCallStart(index=0, id=part.id, name=part.name),
        ir.ToolCallDelta(index=0, arguments=raw),
        ir.ToolCallEnd(index=0),
    ]
