"""A scenario's expectations evaluated on what the SDK saw: one named check result per expectation."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jsonschema
from pydantic import BaseModel, ConfigDict

from harness import ir
from harness.ir.tool_schema import tools_without_empties
from harness.scenarios.model import Capability, Expectations, Scenario

if TYPE_CHECKING:
    # Only for typing: drivers import the scenario model, so a runtime import here would be circular.
    from harness.drivers.base import SdkResult


class CheckResult(BaseModel):
    """One expectation, checked."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    name: str
    """Which expectation, e.g. `stop_reason`, `tool_calls`, `error.kind`."""
    passed: bool
    """Whether what was seen meets it."""
    expected: Any = None
    """What the scenario expects (JSON)."""
    actual: Any = None
    """What the SDK saw (JSON)."""


@dataclass
class Seen:
    """What an SDK saw, flattened from its response or its stream (whichever the run produced)."""

    text: str = ""
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)
    thinking: list[tuple[str, str | None]] = field(default_factory=list)
    stop_reason: ir.StopReason | None = None
    usage: ir.Usage = field(default_factory=ir.Usage)
    error: ir.IRError | None = None


def _from_response(response: ir.Response) -> Seen:
    seen = Seen(stop_reason=response.stop_reason, usage=response.usage)
    for part in response.content:
        if isinstance(part, ir.TextPart):
            seen.text += part.text
        elif isinstance(part, ir.ToolCallPart):
            seen.tool_calls.append((part.name, part.arguments))
        elif isinstance(part, ir.ThinkingPart):
            seen.thinking.append((part.text, part.signature))
    return seen


def _parse(raw: str) -> Any:
    try:
        return json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return None


def _from_events(events: list[ir.StreamEvent]) -> Seen:
    seen = Seen()
    calls: dict[int, list[str]] = {}
    thinking: dict[int, str] = {}
    for event in events:
        if isinstance(event, ir.TextDelta):
            seen.text += event.text
        elif isinstance(event, ir.ToolCallStart):
            calls[event.index] = [event.name, ""]
        elif isinstance(event, ir.ToolCallDelta):
            calls[event.index][1] += event.arguments
        elif isinstance(event, ir.ThinkingDelta):
            thinking[event.index] = thinking.get(event.index, "") + event.text
        elif isinstance(event, ir.ThinkingEnd):
            seen.thinking.append((thinking.get(event.index, ""), event.signature))
        elif isinstance(event, ir.MessageStart | ir.UsageEvent | ir.Done):
            seen.usage = seen.usage.merged(event.usage)
            if isinstance(event, ir.Done):
                seen.stop_reason = event.stop_reason
        elif isinstance(event, ir.ErrorEvent):
            seen.error = event.error
    seen.tool_calls = [(name, _parse(raw)) for name, raw in (calls[i] for i in sorted(calls))]
    return seen


def flatten(seen: SdkResult) -> Seen:
    """The text, tool calls, thinking, stop reason, usage and error of a result, from whichever form it has."""
    if seen.response is not None:
        flat = _from_response(seen.response)
    elif seen.events is not None:
        flat = _from_events(seen.events)
    else:
        flat = Seen()
    flat.error = seen.error or flat.error
    return flat


def _check(name: str, passed: bool, expected: Any, actual: Any) -> CheckResult:
    return CheckResult(name=name, passed=passed, expected=expected, actual=actual)


def _content_checks(expect: Expectations, flat: Seen, scenario: Scenario) -> list[CheckResult]:
    out: list[CheckResult] = []
    if expect.stop_reason is not None:
        accepted = expect.stop_reason if isinstance(expect.stop_reason, list) else [expect.stop_reason]
        actual = flat.stop_reason.kind if flat.stop_reason else None
        out.append(_check("stop_reason", actual in accepted, expect.stop_reason, actual))
    if expect.text_equals is not None:
        out.append(_check("text_equals", flat.text == expect.text_equals, expect.text_equals, flat.text))
    for needle in expect.text_contains:
        out.append(_check("text_contains", needle in flat.text, needle, flat.text))
    if expect.tool_calls is not None:
        want = [{"name": c.name, "arguments": c.arguments} for c in expect.tool_calls]
        got = [{"name": n, "arguments": a} for n, a in flat.tool_calls]
        match = len(want) == len(got) and all(
            w["name"] == g["name"] and (w["arguments"] is None or w["arguments"] == g["arguments"])
            for w, g in zip(want, got, strict=True)
        )
        out.append(_check("tool_calls", match, want, got))
    if expect.text_is_json or expect.text_matches_schema:
        parsed = _parse(flat.text) if flat.text.strip() else None
        out.append(_check("text_is_json", parsed is not None, True, flat.text))
        fmt = scenario.request.response_format
        if expect.text_matches_schema and isinstance(fmt, ir.ResponseFormatJsonSchema):
            problems = sorted(e.message for e in jsonschema.Draft202012Validator(fmt.schema_).iter_errors(parsed))
            out.append(_check("text_matches_schema", parsed is not None and not problems, fmt.schema_, problems))
    return out


def _usage_checks(expect: Expectations, flat: Seen) -> list[CheckResult]:
    out: list[CheckResult] = []
    usage = flat.usage
    if expect.usage_present:
        ok = (usage.input_tokens or 0) > 0 and (usage.output_tokens or 0) > 0
        actual = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
        out.append(_check("usage_present", ok, "input_tokens > 0 and output_tokens > 0", actual))
    if expect.cache_read_present:
        ok = (usage.cache_read_tokens or 0) > 0
        out.append(_check("cache_read_present", ok, "cache_read_tokens > 0", usage.cache_read_tokens))
    return out


def _thinking_checks(expect: Expectations, flat: Seen, caps: Collection[Capability] | None) -> list[CheckResult]:
    out: list[CheckResult] = []
    if expect.thinking_present:
        ok = any(text for text, _ in flat.thinking)
        out.append(_check("thinking_present", ok, True, [t for t, _ in flat.thinking]))
    if expect.thinking_signature and (caps is None or Capability.THINKING_SIGNATURE in caps):
        ok = any(sig for _, sig in flat.thinking)
        out.append(_check("thinking_signature", ok, True, [s for _, s in flat.thinking]))
    return out


def _error_checks(
    expect: Expectations, flat: Seen, seen: SdkResult, caps: Collection[Capability] | None
) -> list[CheckResult]:
    error = flat.error
    if expect.error is None:
        actual = error.model_dump(mode="json") if error else None
        return [_check("no_error", error is None, None, actual)]
    want = expect.error
    kind = error.kind.value if error else None
    kinds = [k.value for k in want.kind] if isinstance(want.kind, list) else [want.kind.value]
    out = [_check("error.kind", kind in kinds, kinds if len(kinds) > 1 else kinds[0], kind)]
    if want.status is not None:
        accepted = want.status if isinstance(want.status, list) else [want.status]
        status = error.status if error else None
        out.append(_check("error.status", status in accepted, want.status, status))
    if want.retry_after is not None and (caps is None or Capability.RETRY_AFTER in caps):
        ok = seen.retry_after is not None and abs(seen.retry_after - want.retry_after) < 1.0
        out.append(_check("error.retry_after", ok, want.retry_after, seen.retry_after))
    if want.exception is not None:
        actual = {"neutral": seen.exception, "class": seen.exception_class}
        wanted = want.exception if isinstance(want.exception, list) else [want.exception]
        shown = [e.value for e in wanted] if len(wanted) > 1 else wanted[0].value
        out.append(_check("error.exception", seen.exception in wanted, shown, actual))
    return out


def evaluate(
    scenario: Scenario, seen: SdkResult, *, capabilities: Collection[Capability] | None = None
) -> list[CheckResult]:
    """Every expectation of `scenario` checked against `seen`.

    `capabilities` are the driver's: checks on values its SDK cannot surface (thinking signatures,
    Retry-After) are left out for a driver without them. None checks everything.
    """
    expect = scenario.expect
    if scenario.kind == "models_list":
        models = seen.models or []
        # A name found is its own evidence; only a missing one carries the whole listing (hundreds of names,
        # which in every passing check made model-list traces the bulk of a run's reports).
        out = [
            _check("models_contain", name in models, name, name if name in models else models)
            for name in expect.models_contain
        ]
        return [*out, *_error_checks(expect, flatten(seen), seen, capabilities)]
    flat = flatten(seen)
    return [
        *_content_checks(expect, flat, scenario),
        *_usage_checks(expect, flat),
        *_thinking_checks(expect, flat, capabilities),
        *_error_checks(expect, flat, seen, capabilities),
    ]


def evaluate_upstream(scenario: Scenario, upstream: ir.Request) -> list[CheckResult]:
    """The request-side expectations: each field in `expect.request_fields` reached the backend unchanged (tool
    schemas compared as the request diff compares them: an empty `$defs` or `required` is no change). A scenario
    that names no field (most) has nothing to compare: neither request is dumped."""
    if not scenario.expect.request_fields:
        return []
    wanted = scenario.request_for(upstream.model).model_dump(mode="json", by_alias=True)
    got = upstream.model_dump(mode="json", by_alias=True)
    out: list[CheckResult] = []
    for name in scenario.expect.request_fields:
        expected, actual = wanted.get(name), got.get(name)
        if name == "tools":
            expected, actual = tools_without_empties(expected), tools_without_empties(actual)
        if isinstance(expected, float) and isinstance(actual, int | float):
            same = abs(expected - actual) < 1e-6
        else:
            same = expected == actual
        out.append(_check(f"request.{name}", same, expected, actual))
    return out
