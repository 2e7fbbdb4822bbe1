"""The imported scenario: the recorded request as IR, the decoded answer as its scripted reply, the client's view
as its expectations, and the capabilities the request needs; written as a scenario file and read back to prove
it loads as one."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, get_origin

import yaml
from pydantic import BaseModel

from harness import ir
from harness.ir import Capability
from harness.scenarios.loader import load_scenario
from harness.scenarios.model import Chunking, Expectations, ReplyError, ReplyOk, Scenario, ScenarioRequest

_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    """A scenario id made of `text`: lower case, runs of other characters as one dash."""
    out = _SLUG.sub("-", text.lower()).strip("-")
    return out if out and out[0].isalnum() else f"imported-{out}".rstrip("-")


def _parts(request: ir.Request) -> list[ir.ContentPart]:
    out: list[ir.ContentPart] = []
    for message in request.messages:
        for part in message.content:
            out.append(part)
            if isinstance(part, ir.ToolResultPart):
                out += part.content
    return out


def asks_thinking(request: ir.Request) -> bool:
    """Whether the request asks for thinking, or sends earlier thinking back."""
    enabled = request.thinking is not None and request.thinking.enabled
    return enabled or any(isinstance(p, ir.ThinkingPart | ir.RedactedThinkingPart) for p in _parts(request))


def requirements(request: ir.Request, reply: ReplyOk | ReplyError, expect: Expectations) -> list[Capability]:
    """The capabilities the case needs: what the request uses, and parallel calls where the answer or the history
    has them (a party without the capability could not carry them)."""
    parts = _parts(request)
    answer = reply.content if isinstance(reply, ReplyOk) else []
    needs: set[Capability] = set()
    if request.tools or any(isinstance(p, ir.ToolCallPart | ir.ToolResultPart) for p in parts):
        needs.add(Capability.TOOLS)
    history_calls = [sum(isinstance(p, ir.ToolCallPart) for p in m.content) for m in request.messages]
    if max(history_calls, default=0) > 1 or sum(isinstance(p, ir.ToolCallPart) for p in answer) > 1:
        needs.add(Capability.PARALLEL_TOOLS)
    if any(isinstance(p, ir.ToolCallPart) and p.call_type is not None for p in [*parts, *answer]):
        needs.add(Capability.CLIENT_TOOL_CALLS)
    if request.tool_choice is not None and request.tool_choice.kind != "auto":
        needs.add(Capability.TOOL_CHOICE)
    if any(isinstance(p, ir.ImagePart) for p in parts):
        needs.add(Capability.VISION)
    files = [p for p in parts if isinstance(p, ir.FilePart)]
    if files:
        needs.add(Capability.FILES)
    forms = {p.form for p in files}
    by_form = (("url", Capability.FILE_URL), ("file_id", Capability.FILE_ID))
    needs.update(need for form, need in by_form if form in forms)
    if asks_thinking(request) or expect.thinking_present:
        needs.add(Capability.THINKING)
    if isinstance(request.response_format, ir.ResponseFormatJsonObject):
        needs.add(Capability.JSON_OBJECT)
    if isinstance(request.response_format, ir.ResponseFormatJsonSchema):
        needs.add(Capability.JSON_SCHEMA)
    if request.stop:
        needs.add(Capability.STOP_SEQUENCES)
    if request.top_p is not None:
        needs.add(Capability.TOP_P)
    needs |= _answer_needs(reply)
    return sorted(needs)


def _answer_needs(reply: ReplyOk | ReplyError) -> set[Capability]:
    """What a party must be able to say to carry this answer, as the committed scenarios declare it: a length
    stop, a stream that begins with an error, and the error kinds not every protocol names."""
    needs: set[Capability] = set()
    error = reply.error if isinstance(reply, ReplyError) else None
    if isinstance(reply, ReplyOk):
        if reply.stop_reason.kind == "max_tokens":
            needs.add(Capability.STOP_MAX_TOKENS)
        if reply.midstream_error is not None:
            error = reply.midstream_error.error
            if reply.midstream_error.after_events == 1:
                needs.add(Capability.STREAM_ERROR_FIRST)
    if error is not None and error.kind == ir.ErrorKind.NOT_FOUND:
        needs.add(Capability.NOT_FOUND_ERROR)
    if error is not None and error.kind == ir.ErrorKind.OVERLOADED:
        needs.add(Capability.OVERLOADED_ERROR)
    return needs


def build(
    scenario_id: str,
    description: str,
    request: ir.Request,
    reply: ReplyOk | ReplyError,
    chunking: Chunking,
    expect: Expectations,
) -> Scenario:
    """The scenario of one imported exchange, in the one streaming mode it was recorded in."""
    data = request.model_dump(mode="json", by_alias=True, exclude={"model", "stream"})
    return Scenario(
        id=scenario_id,
        description=description,
        request=ScenarioRequest.model_validate(data),
        reply=reply,
        expect=expect,
        requires=requirements(request, reply, expect),
        streaming=["stream" if request.stream else "nonstream"],
        chunking=chunking,
    )


def _without_defaults(model: BaseModel, dumped: dict[str, Any]) -> dict[str, Any]:
    """`dumped` (the model's JSON dump) without the fields left at their defaults; union tags (`kind`, an image
    source's `type`) stay so the file reads back as the same model."""
    out: dict[str, Any] = {}
    for name, info in type(model).model_fields.items():
        key = info.alias or name
        if key not in dumped:
            continue
        value = getattr(model, name)
        tag = get_origin(info.annotation) is Literal
        if not tag and not info.is_required() and value == info.get_default(call_default_factory=True):
            continue
        out[key] = _plain(value, dumped[key])
    return out


def _plain(value: Any, dumped: Any) -> Any:
    if isinstance(value, BaseModel) and isinstance(dumped, dict):
        return _without_defaults(value, dumped)
    if isinstance(value, list) and isinstance(dumped, list):
        return [_plain(v, d) for v, d in zip(value, dumped, strict=True)]
    return dumped


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    # Multi-line answers as literal blocks, so a person can read the scenario.
    if "\n" in data and not data.startswith(" ") and not any(ord(c) < 32 and c not in "\n\t" for c in data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


class _Dumper(yaml.SafeDumper):
    """Safe dumper with literal blocks for multi-line text."""


_Dumper.add_representer(str, _str_presenter)


def render(scenario: Scenario) -> str:
    """The scenario file's text."""
    data = _without_defaults(scenario, scenario.model_dump(mode="json", by_alias=True))
    return str(yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120))


def write(scenario: Scenario, folder: Path) -> Path:
    """Write `folder/<id>.yaml` and read it back: it must load (schema, rules, id = file name) as the same
    scenario, or nothing is left behind."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{scenario.id}.yaml"
    path.write_text(render(scenario), encoding="utf-8")
    try:
        loaded = load_scenario(path)
    except ValueError:
        path.unlink()
        raise
    if loaded != scenario:
        path.unlink()
        raise ValueError(f"{path}: the written scenario does not read back as the imported one")
    return path
