"""Value mappings shared by the request, response and stream modules: stop reasons, usage, reasoning effort.

The Responses API has no finish reason per output: a response ends `completed`, `incomplete` (with
`incomplete_details.reason`), `failed` or `cancelled`. A completed response whose output holds a function call
is a tool-use stop; a completed one whose message is a refusal is a refusal.
"""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.protocols.responses.reader import JSONDict, Reader

INCOMPLETE_REASONS: dict[str, ir.StopKind] = {
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
}
"""`incomplete_details.reason` values that name an IR stop kind (others, e.g. `max_messages`, are `other`)."""

_INCOMPLETE_FOR: dict[str, str] = {kind: reason for reason, kind in INCOMPLETE_REASONS.items()}


def stop_reason(status: str | None, reason: str | None, *, calls: bool, refused: bool) -> ir.StopReason | None:
    """The IR stop reason of a finished response: its status, the incomplete reason, and whether its output
    holds a function call or a refusal. An unfinished status (`in_progress`, `queued`) or none gives None."""
    if status == "completed":
        kind: ir.StopKind = "tool_use" if calls else "refusal" if refused else "end_turn"
        return ir.StopReason(kind=kind, raw=status)
    if status == "incomplete":
        return ir.StopReason(kind=INCOMPLETE_REASONS.get(reason or "", "other"), raw=reason or status)
    if status == "failed":
        return ir.StopReason(kind="error", raw=status)
    if status == "cancelled":
        return ir.StopReason(kind="other", raw=status)
    return None


def status_of(stop: ir.StopReason | None) -> tuple[str, str | None]:
    """The wire status and incomplete reason that carry an IR stop reason: only a token limit and a content
    filter end `incomplete`; every other kind (and None) is `completed` (see the losses table)."""
    reason = _INCOMPLETE_FOR.get(stop.kind) if stop is not None else None
    return ("incomplete", reason) if reason is not None else ("completed", None)


def decode_usage(r: Reader, value: Any, path: str = "usage") -> ir.Usage | None:
    """IR usage from a `usage` object (null/absent: None). `input_tokens` already counts cached tokens and
    `output_tokens` reasoning tokens, which is the IR convention."""
    usage = r.opt_obj(value, path)
    if usage is None:
        return None
    details = r.opt_obj(usage.get("input_tokens_details"), f"{path}.input_tokens_details") or {}
    out_details = r.opt_obj(usage.get("output_tokens_details"), f"{path}.output_tokens_details") or {}
    return ir.Usage(
        input_tokens=r.opt_int(usage.get("input_tokens"), f"{path}.input_tokens"),
        output_tokens=r.opt_int(usage.get("output_tokens"), f"{path}.output_tokens"),
        cache_read_tokens=r.opt_int(details.get("cached_tokens"), f"{path}.input_tokens_details.cached_tokens"),
        cache_write_tokens=r.opt_int(
            details.get("cache_write_tokens"), f"{path}.input_tokens_details.cache_write_tokens"
        ),
        reasoning_tokens=r.opt_int(
            out_details.get("reasoning_tokens"), f"{path}.output_tokens_details.reasoning_tokens"
        ),
    )


def encode_usage(usage: ir.Usage) -> JSONDict:
    """A `usage` object. Every figure is required by the SDK's types, so an unknown one is sent as 0 (listed
    losses); the API's recordings lack `cache_write_tokens`, which the SDK's types (3.x) now require."""
    prompt, completion = usage.input_tokens or 0, usage.output_tokens or 0
    details = {"cached_tokens": usage.cache_read_tokens or 0, "cache_write_tokens": usage.cache_write_tokens or 0}
    return {
        "input_tokens": prompt,
        "input_tokens_details": details,
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
        "total_tokens": prompt + completion,
    }


def reasoning_effort(thinking: ir.ThinkingConfig) -> str:
    """The `reasoning.effort` level that carries IR thinking settings: `none` when disabled; else by budget (up
    to 2048 tokens low, up to 8192 medium, more high; no budget: medium, OpenAI's default). The same levels as
    Chat Completions' `reasoning_effort`, so both OpenAI wires ask for the same reasoning."""
    if not thinking.enabled:
        return "none"
    budget = thinking.budget_tokens
    if budget is None:
        return "medium"
    return "low" if budget <= 2048 else "medium" if budget <= 8192 else "high"
