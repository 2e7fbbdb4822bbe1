"""What a response object says beyond what this codec reads or writes, kept as provider extras
(`ir.ProviderExtras`, under `responses`) so a decoded answer re-encodes with it, and so a reference backend can
say what only api.openai.com knows (timestamps, the service tier that served the request, `billing`, a
message's `phase`).

Extras are shaped like the response object: its unknown top-level keys (`service_tier` unless it is the
encoder's `default`, `moderation`, `billing`, a field added after this codec was written), the unknown keys of
its `usage` (and usage details), and under `output` one object per output item the encoder writes (in the
encoder's item order: see `items.group_parts`) holding that item's unknown keys (`phase`). The times
(`created_at`, `completed_at`) are the encoder's own, the clock when it writes the object (a translating proxy
answers now), so a decoded answer does not keep them. The encoder lays extras under its own values (`apply`),
except the times and the tier, which an extra replaces (the reference backend's seeded times), and writes every
object in the API's key order (`api_order`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness import ir
from harness.protocols.responses import client_calls, items
from harness.protocols.responses.reader import NAME, JSONDict, Reader

_USAGE: JSONDict = {
    "input_tokens": None,
    "input_tokens_details": {"cached_tokens": None, "cache_write_tokens": None},
    "output_tokens": None,
    "output_tokens_details": {"reasoning_tokens": None},
    "total_tokens": None,
}
_PLAIN_KEYS = (
    "id", "object", "status", "background", "error", "incomplete_details", "instructions", "max_output_tokens",
    "max_tool_calls", "metadata", "model", "output", "parallel_tool_calls", "previous_response_id",
    "prompt_cache_key", "reasoning", "safety_identifier", "store", "temperature", "tool_choice", "tools",
    "top_logprobs", "top_p", "truncation", "user", "frequency_penalty", "presence_penalty", "created_at",
    "completed_at",
)  # fmt: skip
RESPONSE_KEYS: JSONDict = {
    **dict.fromkeys(_PLAIN_KEYS),
    "text": {"format": None, "verbosity": None},
    "usage": _USAGE,
}
"""The keys of a response object the codec reads or writes (nested where its objects are known key by key);
every other key is an extra."""

ITEM_KEYS: dict[str, frozenset[str]] = {
    "message": frozenset({"id", "type", "status", "content", "role"}),
    "reasoning": frozenset({"id", "type", "status", "summary", "content", "encrypted_content"}),
    "function_call": frozenset({"id", "type", "status", "arguments", "call_id", "name"}),
}
"""The keys of each output item type the codec reads or writes."""

_RESPONSE_HEAD = ("id", "object", "created_at", "status")
_PROVIDER_WINS = ("created_at", "completed_at", "service_tier")
"""Keys the encoder writes a value of its own for (the times it wrote the object, the default tier) that a value
given as an extra replaces (the reference backend's seeded times, a provider's tier)."""
_ITEM_HEAD = ("id", "type", "status")


def unknown(obj: Mapping[str, Any], known: Mapping[str, Any]) -> JSONDict:
    """The keys of `obj` that `known` does not name, and the unknown keys of the objects it names by a
    template of their own."""
    out: JSONDict = {}
    for key, value in obj.items():
        if key not in known:
            out[key] = value
        elif isinstance(known[key], dict) and isinstance(value, dict):
            inner = unknown(value, known[key])
            if inner:
                out[key] = inner
    return out


def decode(r: Reader, obj: JSONDict, output_path: str = "output") -> ir.ProviderExtras | None:
    """The extras of a response object (None when it has none)."""
    found = unknown(obj, RESPONSE_KEYS)
    if found.get("service_tier") == "default":
        del found["service_tier"]  # what the encoder writes when it knows none
    per_item = output_extras(r, r.opt_lst(obj.get("output"), output_path), output_path)
    if any(per_item):
        found["output"] = per_item
    return {NAME: found} if found else None


def output_extras(r: Reader, output: list[Any], path: str = "output") -> list[JSONDict]:
    """One object per output item the encoder would write for these wire items, holding the unknown keys of
    the wire item the encoder's item begins with."""
    content: list[ir.ContentPart] = []
    origin: list[int] = []
    for i, value in enumerate(output):
        parts, _ = items.decode_item(r, value, f"{path}[{i}]")
        content += parts
        origin += [i] * len(parts)
    out: list[JSONDict] = []
    for at, part in enumerate(content):
        if at and items.continues(content[at - 1 : at], part):
            continue  # part of the item before (two adjacent message items are one item to the encoder)
        wire = output[origin[at]]
        known = client_calls.known_keys(wire) if client_calls.is_client_call(wire) else ITEM_KEYS.get(wire["type"], ())
        out.append(unknown(wire, dict.fromkeys(known)))
    return out


def apply(obj: JSONDict, extras: ir.ProviderExtras | None) -> JSONDict:
    """A response object with the Responses extras laid under its own values (`created_at` from the extras),
    each output item filled from its entry of `output`, in the API's key order."""
    mine: JSONDict = dict((extras or {}).get(NAME, {}))
    per_item = mine.pop("output", None)
    for key in _PROVIDER_WINS:
        if key in mine:
            obj = {**obj, key: mine.pop(key)}
    out = ir.fill_missing(obj, mine) if mine else dict(obj)
    if isinstance(per_item, list) and isinstance(out.get("output"), list):
        out["output"] = [item_with(item, per_item, i) for i, item in enumerate(out["output"])]
    return api_order(out, _RESPONSE_HEAD, last=("metadata",))


def item_with(item: JSONDict, per_item: Any, index: int) -> JSONDict:
    """An output item with its extras (`per_item[index]`, from a response's `output` extras) filled in."""
    found = per_item[index] if isinstance(per_item, list) and index < len(per_item) else None
    if not isinstance(found, dict) or not found:
        return item
    return api_order(ir.fill_missing(item, found), _ITEM_HEAD)


def api_order(obj: JSONDict, head: Sequence[str], last: Iterable[str] = ()) -> JSONDict:
    """`obj` in the key order api.openai.com writes: `head` first, then the others sorted, `last` at the end."""
    tail = [k for k in last if k in obj]
    rest = sorted(k for k in obj if k not in head and k not in tail)
    return {k: obj[k] for k in (*[h for h in head if h in obj], *rest, *tail)}
