"""The text-level state machine: finds `<tool_call>...</tool_call>` in streamed model text, split anywhere.

Qwen2.5/Qwen3 (and Hermes-style fine-tunes) write tool calls into the text, as their chat templates render them:

    Let me check.
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

Qwen3-Coder writes the body as XML instead:

    <tool_call>
    <function=get_weather>
    <parameter=city>
    Paris
    </parameter>
    </function>
    </tool_call>

The scanner passes text outside the tags through at once, except a tail that could still become the opening
tag (a partial `<tool_call`, and one newline before it, which belongs to the template and not to the text).
A tag's body is buffered until the closing tag; a body that does not parse, or a tag still open when the text
ends, comes out as the original text with a warning. One newline right after `</tool_call>` is template
separator and dropped too. Output depends only on the concatenated input, never on how it was split.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness import ir

OPEN = "<tool_call>"
"""Opening tag of a tool call."""
CLOSE = "</tool_call>"
"""Closing tag of a tool call."""
_LEAD = "\n" + OPEN  # the template puts a newline between text and a call
_ESCAPED_SLASH = "<\\/"

_FUNCTION = re.compile(r"<function=([^>\n]+)>(.*)</function>", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\n]+)>(.*?)</parameter>", re.DOTALL)


@dataclass(frozen=True)
class ParsedCall:
    """A tool call found in the text: its name and arguments object."""

    name: str
    """Function name."""
    arguments: dict[str, Any]
    """Arguments object."""


Segment = str | ParsedCall
"""What the scanner yields: text to pass on, or a parsed call."""


class XmlToolCallScanner:
    """Incremental scanner over one text block; `feed` text pieces, then `finish` once."""

    def __init__(self, tools: Sequence[ir.Tool] = ()) -> None:
        self.warnings: list[str] = []
        """One entry per malformed or unterminated tool call that was passed on as text."""
        self._schemas = {t.name: t.parameters for t in tools}
        self._buf = ""
        self._inside = False
        self._lead_newline = False  # a newline before the open tag was held back from the text
        self._after_call = False  # the next character, if a newline, is the template's separator

    def feed(self, text: str) -> list[Segment]:
        """Consume more text; return what can be decided now."""
        self._buf += text
        out: list[Segment] = []
        while True:
            if self._after_call and self._buf:
                self._after_call = False
                if self._buf[0] == "\n":
                    self._buf = self._buf[1:]
            if self._inside:
                end = self._buf.find(CLOSE)
                if end < 0:
                    return out
                body, self._buf = self._buf[:end], self._buf[end + len(CLOSE) :]
                self._inside = False
                out += self._close(body)
                continue
            start = self._buf.find(OPEN)
            if start < 0:
                held = _held(self._buf)
                _text(out, self._buf[: len(self._buf) - held])
                self._buf = self._buf[len(self._buf) - held :]
                return out
            before, self._buf = self._buf[:start], self._buf[start + len(OPEN) :]
            self._lead_newline = before.endswith("\n")
            _text(out, before[:-1] if self._lead_newline else before)
            self._inside = True

    def finish(self) -> list[Segment]:
        """End of the text block: flush what was held back; an open tag becomes text with a warning."""
        out: list[Segment] = []
        if self._inside:
            self.warnings.append(f"unterminated {OPEN} at the end of the text; passed on as text")
            _text(out, ("\n" if self._lead_newline else "") + OPEN + self._buf)
        else:
            _text(out, self._buf)
        self._buf, self._inside, self._lead_newline, self._after_call = "", False, False, False
        return out

    def _close(self, body: str) -> list[Segment]:
        parsed = parse_body(body, self._schemas)
        if isinstance(parsed, ParsedCall):
            self._after_call = True
            return [parsed]
        self.warnings.append(f"malformed tool call ({parsed}); passed on as text")
        return [("\n" if self._lead_newline else "") + OPEN + body + CLOSE]


def _text(out: list[Segment], text: str) -> None:
    if text:
        out.append(text)


def _held(buf: str) -> int:
    """Length of the longest tail of `buf` that may still grow into `\\n<tool_call>` or `<tool_call>`."""
    for size in range(min(len(buf), len(_LEAD) - 1), 0, -1):
        tail = buf[-size:]
        if _LEAD.startswith(tail) or OPEN.startswith(tail):
            return size
    return 0


def parse_body(body: str, schemas: Mapping[str, Any] | None = None) -> ParsedCall | str:
    """The call in a `<tool_call>` body (Hermes JSON or Qwen3-Coder XML), or why it is not one."""
    text = body.strip()
    if text.startswith("<function="):
        return _parse_coder(text, (schemas or {}))
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return f"body is neither JSON nor <function=...>: {exc}"
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        return "JSON body has no name"
    arguments = obj.get("arguments", {})
    if isinstance(arguments, str):
        # Some fine-tunes write the arguments as a JSON string, the way OpenAI's wire carries them.
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            return "arguments string is not JSON"
    if not isinstance(arguments, dict):
        return "arguments are not a JSON object"
    return ParsedCall(name=obj["name"], arguments=arguments)


def _parse_coder(text: str, schemas: Mapping[str, Any]) -> ParsedCall | str:
    match = _FUNCTION.fullmatch(text)
    if match is None:
        return "<function=...> body is not closed by </function>"
    name, inner = match.group(1).strip(), match.group(2)
    properties = schemas.get(name, {}).get("properties", {}) if isinstance(schemas.get(name), dict) else {}
    arguments: dict[str, Any] = {}
    rest = inner
    for param in _PARAMETER.finditer(inner):
        key = param.group(1).strip()
        value = _strip_one_newline(param.group(2))
        arguments[key] = _coder_value(value, properties.get(key) if isinstance(properties, dict) else None)
        rest = rest.replace(param.group(0), "", 1)
    if rest.strip():
        return f"unexpected text in <function={name}>: {rest.strip()[:40]!r}"
    return ParsedCall(name=name, arguments=arguments)


def _strip_one_newline(value: str) -> str:
    # The template writes "<parameter=p>\nVALUE\n</parameter>"; those two newlines are not part of VALUE.
    value = value[1:] if value.startswith("\n") else value
    return value[:-1] if value.endswith("\n") else value


def _coder_value(value: str, schema: Any) -> Any:
    """A Qwen3-Coder parameter value: raw text for string parameters, JSON otherwise.

    Without a schema (a stream decoder does not see the request), a value that parses as a JSON number,
    boolean, null, array or object is taken as that; anything else stays a string.
    """
    declared = schema.get("type") if isinstance(schema, dict) else None
    if declared == "string":
        return value
    if declared == "boolean" and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return value
    return value if isinstance(parsed, str) and declared is None else parsed


def render_call(name: str, arguments: Mapping[str, Any], *, style: str = "hermes") -> str:
    """The `<tool_call>` text a Qwen model writes for one call (`hermes` JSON body or `coder` XML body)."""
    if style == "coder":
        params = "".join(f"<parameter={k}>\n{_coder_text(v)}\n</parameter>\n" for k, v in arguments.items())
        return f"{OPEN}\n<function={name}>\n{params}</function>\n{CLOSE}"
    body = json.dumps({"name": name, "arguments": dict(arguments)}, ensure_ascii=False)
    # "</" only occurs inside JSON strings; "<\/" is the same string and cannot end the tag early.
    body = body.replace("</", _ESCAPED_SLASH)
    return f"{OPEN}\n{body}\n{CLOSE}"


def _coder_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
