"""Request-view rules: differences between a client's request and the upstream one that are not losses of any
protocol and no proxy bug, so no `losses` key could (or should) declare them.

They work on request JSON (`ir.to_json(request)`) and never mutate their input, unless the caller owns it and
says so (`owned=True`: `request_divergences` copies each request once and lets the rules change it in place).
They come in two sorts:
- `inert_settings`, `one_result_per_tool_message`: applied alike to both sides (settings without effect, one
  conversation written two ways);
- `text_layout`: pairwise, it accepts the upstream side's content when it is the client's with its text parts
  joined into fewer parts, as wires with one text field per message (Ollama `content`, Gemini's merged parts) do;
- `system_folded`: pairwise, it accepts an upstream request whose system prompt was folded into the first user
  turn (`<system>\n\n<user text>`), as backends without a system role (Gemma) require; the fold must be exact;
- `empty_schema_keywords`: applied alike, an empty `properties`, `$defs`, `definitions` or `required` in a tool
  or response schema says nothing, so it compares as absent (`harness.ir.tool_schema`);
- `tool_result_json`: pairwise, tool-result text that is the same JSON object written with other spacing or
  escaping (where a wire carries the result as an object), or the client's text wrapped in a one-key object (as
  a gateway writes a text result into an object-only wire such as Gemini's `functionResponse.response`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from harness.ir.tool_schema import (
    SUBSCHEMA_LISTS,
    SUBSCHEMA_MAPS,
    SUBSCHEMAS,
    schema_without_empties,
    tools_without_empties,
)

Json = dict[str, Any]

# Text that joins when a wire has fewer text fields than the IR has parts, and how each protocol glues it.
_JOINED_KINDS = ("text", "thinking")
_SEPARATORS = ("", "\n")


def inert_settings(request: Json, *, owned: bool = False) -> Json:
    """Settings that cannot have an effect compare as unset: a thinking budget while thinking is disabled,
    parallel_tool_calls under tool_choice none (no calls at all), tool_choice auto where tools are offered
    (every protocol's default then: LLM Gateway sends it explicitly), and an empty system prompt (a real
    Responses request's `instructions: ""`; Anthropic's decoder reads `"system": ""` as none). Protocols drop
    them (Anthropic, Gemini)."""
    out = request if owned else copy.deepcopy(request)
    if out.get("system") == "":
        out["system"] = None
    thinking = out.get("thinking")
    if isinstance(thinking, dict) and thinking.get("enabled") is False:
        thinking["budget_tokens"] = None
    choice = out.get("tool_choice")
    if isinstance(choice, dict) and choice.get("kind") == "none":
        out["parallel_tool_calls"] = None
    if isinstance(choice, dict) and choice.get("kind") == "auto" and out.get("tools"):
        out["tool_choice"] = None
    return out


def one_result_per_tool_message(request: Json, *, owned: bool = False) -> Json:
    """A tool message holding several results is the same turn as consecutive tool messages of one result each
    (OpenAI decodes consecutive `tool` messages as one IR message, Ollama sends each result on its own)."""
    out = request if owned else copy.deepcopy(request)
    messages = out.get("messages")
    if not isinstance(messages, list):
        return out
    split: list[Any] = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(message, dict) and message.get("role") == "tool" and isinstance(content, list) and content:
            split.extend({**message, "content": [part]} for part in content)
        else:
            split.append(message)
    out["messages"] = split
    return out


def text_layout(left: Json, right: Json, *, owned: bool = False) -> tuple[Json, Json]:
    """Both requests, with each content list of `right` replaced by `left`'s when the two differ only in how text
    is cut into parts: same non-text parts in the same order, and each kind of text (text, thinking) joined into
    fewer parts with '' or '\\n'. Message by message, and inside tool results at the same place."""
    a, b = (left, right) if owned else (copy.deepcopy(left), copy.deepcopy(right))
    for mine, theirs in _content_pairs(a.get("messages"), b.get("messages")):
        if mine != theirs and same_text_layout(mine, theirs):
            theirs[:] = copy.deepcopy(mine)
    return a, b


FOLD_SEPARATOR = "\n\n"


def system_folded(left: Json, right: Json, *, owned: bool = False) -> tuple[Json, Json]:
    """Unfold the upstream side when it is exactly the client's request with the system prompt prepended to the
    first user turn's first text part; anything else (a dropped or altered system prompt) stays a divergence."""
    system = left.get("system")
    messages = right.get("messages") or []
    if not system or right.get("system") is not None or not messages or messages[0].get("role") != "user":
        return left, right
    parts = messages[0].get("content") or []
    first = parts[0] if parts else None
    prefix = system + FOLD_SEPARATOR
    if not (isinstance(first, dict) and first.get("kind") == "text" and first.get("text", "").startswith(prefix)):
        return left, right
    out = right if owned else copy.deepcopy(right)
    out["system"] = system
    out["messages"][0]["content"][0]["text"] = first["text"][len(prefix) :]
    return left, out


def _content_pairs(left: Any, right: Any) -> Iterator[tuple[list[Any], list[Any]]]:
    if not (isinstance(left, list) and isinstance(right, list)) or len(left) != len(right):
        return
    for lm, rm in zip(left, right, strict=True):
        lc, rc = (m.get("content") if isinstance(m, dict) else None for m in (lm, rm))
        if not (isinstance(lc, list) and isinstance(rc, list)):
            continue
        if len(lc) == len(rc):  # tool results first: their content may differ in layout alone as well
            for lp, rp in zip(lc, rc, strict=True):
                both = _kind(lp) == _kind(rp) == "tool_result"
                if both and isinstance(lp.get("content"), list) and isinstance(rp.get("content"), list):
                    yield lp["content"], rp["content"]
        yield lc, rc


def same_text_layout(left: list[Any], right: list[Any]) -> bool:
    """Whether `right` is `left` with text parts joined (see `text_layout`); signatures of thinking must agree."""
    if [p for p in left if _kind(p) not in _JOINED_KINDS] != [p for p in right if _kind(p) not in _JOINED_KINDS]:
        return False
    for kind in _JOINED_KINDS:
        mine = [p for p in left if _kind(p) == kind]
        theirs = [p for p in right if _kind(p) == kind]
        if [p.get("signature") for p in mine if p.get("signature")] != [
            p.get("signature") for p in theirs if p.get("signature")
        ]:
            return False
        texts, joined = [str(p.get("text")) for p in mine], "".join(str(p.get("text")) for p in theirs)
        if not any(sep.join(texts) == joined for sep in _SEPARATORS):
            return False
    return True


def _kind(part: Any) -> Any:
    return part.get("kind") if isinstance(part, dict) else None


def empty_schema_keywords(request: Json, *, owned: bool = False) -> Json:
    """Tool parameter and response schemas with empty `properties` / `$defs` / `definitions` / `required` removed:
    JSON Schema gives an absent keyword exactly that meaning (gateways add `$defs: {}` or `required: []`, or drop
    `properties: {}` because Gemini rejects it). A schema that lost real properties still differs."""
    out = request if owned else copy.deepcopy(request)
    if "tools" in out:
        out["tools"] = tools_without_empties(out["tools"])
    fmt = out.get("response_format")
    if isinstance(fmt, dict) and isinstance(fmt.get("schema"), dict):
        fmt["schema"] = schema_without_empties(fmt["schema"])
    return out


def _json_object(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, str) or not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _result_text(part: Any) -> dict[str, Any] | None:
    """The single text part of a tool result (the part itself, to compare and replace), if it has exactly one."""
    content = part.get("content") if isinstance(part, dict) and part.get("kind") == "tool_result" else None
    texts = [p for p in content or [] if isinstance(p, dict) and p.get("kind") == "text"]
    return texts[0] if len(texts) == 1 else None


def tool_result_json(
    left: Json, right: Json, *, frontend_objects: bool, upstream_objects: bool, owned: bool = False
) -> tuple[Json, Json]:
    """Both requests, `right`'s tool-result text replaced by `left`'s where the wire made the difference:

    - `frontend_objects` (the client's wire carries a tool result as an object, which the frontend codec wrote as
      compact JSON text): the upstream text is the same JSON object, re-serialized;
    - `upstream_objects` (the backend's wire takes only an object): the upstream text is the client's JSON object
      re-serialized, or a one-key object whose
      value is exactly the client's text (`{"content": text}`; Gemini treats any key but `output`/`error` as the
      whole output, so the model reads the same text; the protocol's wire rules may still warn about the key).
    Anything else (a changed value, text turned into a JSON list of blocks) still differs."""
    a, b = left, right if owned else copy.deepcopy(right)
    for mine, theirs in _content_pairs(a.get("messages"), b.get("messages")):
        if len(mine) != len(theirs):
            continue
        for lp, rp in zip(mine, theirs, strict=True):
            lt, rt = _result_text(lp), _result_text(rp)
            if lt is None or rt is None or lt.get("text") == rt.get("text"):
                continue
            parsed = _json_object(rt.get("text"))
            # Either wire carrying results only as objects re-serializes a client's JSON object text.
            objects = frontend_objects or upstream_objects
            same = objects and parsed is not None and parsed == _json_object(lt.get("text"))
            wrapped = upstream_objects and parsed is not None and list(parsed.values()) == [lt.get("text")]
            if same or wrapped:
                rt["text"] = lt["text"]
    return a, b


def _without_keywords(schema: Any, keywords: tuple[str, ...]) -> Any:
    """A JSON Schema without `keywords`, walked through schema positions only."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k not in keywords}
    for key in SUBSCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: _without_keywords(sub, keywords) for name, sub in out[key].items()}
    for key in (*SUBSCHEMA_LISTS, *SUBSCHEMAS):
        sub = out.get(key)
        if isinstance(sub, list):
            out[key] = [_without_keywords(s, keywords) for s in sub]
        elif isinstance(sub, dict):
            out[key] = _without_keywords(sub, keywords)
    return out


def unsaid_schema_keywords(
    left: Json, right: Json, keywords: tuple[str, ...], *, owned: bool = False
) -> tuple[Json, Json]:
    """Both requests with `keywords` removed from the response schema, when the upstream request's schema dialect
    could not say them (its decoder lists them: `common.UNSAID_SCHEMA_KEYWORDS`): a gateway that writes Gemini's
    OpenAPI-subset `responseSchema` must drop `additionalProperties`. Through a dialect that can say them (no
    list), a dropped keyword still differs."""
    if not keywords:
        return left, right
    a, b = (left, right) if owned else (copy.deepcopy(left), copy.deepcopy(right))
    for side in (a, b):
        fmt = side.get("response_format")
        if isinstance(fmt, dict) and isinstance(fmt.get("schema"), dict):
            fmt["schema"] = _without_keywords(fmt["schema"], keywords)
    return a, b


def thinking_budget_chosen(left: Json, right: Json) -> tuple[Json, Json]:
    """Both requests, `right`'s thinking budget removed where the client asked for thinking without one (a
    Responses client gives an effort): a backend that needs a budget (Anthropic) gets one the proxy chose."""
    mine, theirs = left.get("thinking"), right.get("thinking")
    if not isinstance(mine, dict) or not isinstance(theirs, dict) or mine.get("budget_tokens") is not None:
        return left, right
    if not (mine.get("enabled") and theirs.get("enabled")):
        return left, right
    return left, {**right, "thinking": {**theirs, "budget_tokens": None}}
