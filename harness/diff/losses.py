"""Loss keys: what a protocol cannot carry, declared as data in each codec's `losses` table and applied here.

Grammar of a key (anything else is a malformed key; `parse_loss` rejects it):

- `Model`: every node of this IR model is dropped (e.g. `RedactedThinkingPart`, `UrlImage`).
- `Model.field`: the field is never carried; it is removed on both sides before comparing.
- `Model.field:value`: the field is not carried when it has this value (e.g. `StopReason.kind:stop_sequence`
  becomes another kind); the field is compared only when neither side has that value.
- Any of the above prefixed with `request.` or `response.`: the loss applies to that direction only (e.g.
  `request.ThinkingPart`: earlier thinking cannot be sent back, though responses carry it). Unprefixed keys
  apply to both the request-side and the response-side diff.

`Model` is an IR model name (`Request`, `Message`, `TextPart`, `ToolCallPart`, `Usage`, `StopReason`,
`IRError`, `ResponseFormatJsonSchema`, `Base64Image`, ...). A node is recognised by its `kind` tag (content
parts, events, tool choices, response formats), its `type` tag (image sources), the key it sits under
(`usage`, `stop_reason`, `thinking`, `error`), a `role` key (messages), its place in `tools`, or as the root
`Request` of a request.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness import ir
from harness.diff.normalize import json_copy

_KIND_MODELS = {
    "TextPart": "text",
    "ImagePart": "image",
    "FilePart": "file",
    "ToolCallPart": "tool_call",
    "ToolResultPart": "tool_result",
    "ThinkingPart": "thinking",
    "RedactedThinkingPart": "redacted_thinking",
    "ToolChoiceAuto": "auto",
    "ToolChoiceNone": "none",
    "ToolChoiceRequired": "required",
    "ToolChoiceTool": "tool",
    "ResponseFormatText": "text",
    "ResponseFormatJsonObject": "json_object",
    "ResponseFormatJsonSchema": "json_schema",
}
_KIND_MODELS.update(
    {"ThinkingEnd": "thinking_end", "ToolCallStart": "tool_call_start", "RedactedThinking": "redacted_thinking"}
)
# A content part's stream-event twin carries the same field: a loss of one is a loss of the other.
_EVENT_TWINS = {
    "ThinkingPart": ("ThinkingEnd",),
    "ToolCallPart": ("ToolCallStart",),
    "RedactedThinkingPart": ("RedactedThinking",),
}
_TYPE_MODELS = {"Base64Image": "base64", "UrlImage": "url"}
_KEY_MODELS = {
    "Usage": ("usage",),
    "StopReason": ("stop_reason",),
    "ThinkingConfig": ("thinking",),
    "IRError": ("error",),
}
# Parent keys that hold a union discriminated on `kind`, so `kind` alone does not say which model a node is.
_UNION_KEYS = {"tool_choice": "ToolChoice", "response_format": "ResponseFormat"}
_EVENT_MODELS = {name for name in dir(ir) if name in ir.__all__}


class LossKeyError(ValueError):
    """A losses-table key outside the grammar."""


Scope = Literal["request", "response"]


@dataclass(frozen=True)
class Loss:
    """One parsed loss key."""

    model: str
    field: str | None = None
    value: str | None = None
    scope: Scope | None = None


@functools.cache
def _fields(model: str) -> frozenset[str]:
    cls = getattr(ir, model, None)
    return frozenset(getattr(cls, "model_fields", {}))


@functools.cache  # the same few dozen keys are parsed for every case of a run
def parse_loss(key: str) -> Loss:
    """Parse a key, checking the model and field exist in the IR."""
    scope: Scope | None = None
    body = key
    for prefix in ("request", "response"):
        if key.startswith(prefix + "."):
            scope, body = ("request" if prefix == "request" else "response"), key[len(prefix) + 1 :]
    head, _, value = body.partition(":")
    model, _, field = head.partition(".")
    if model not in _EVENT_MODELS or not _fields(model):
        raise LossKeyError(f"{key!r}: {model!r} is not an IR model")
    if field and field not in _fields(model):
        raise LossKeyError(f"{key!r}: {model} has no field {field!r}")
    if value and not field:
        raise LossKeyError(f"{key!r}: a value needs a field (Model.field:value)")
    return Loss(model, field or None, value or None, scope)


def _is(node: dict[str, Any], parent_key: str | None, model: str) -> bool:
    # Decides on `_signature(node, parent_key)` alone: keep the two in step.
    if model == "Request":
        return parent_key == "request" and "messages" in node
    if model == "Message":
        return "role" in node and "content" in node
    if model == "Tool":
        return parent_key == "tools"
    if model in _TYPE_MODELS:
        return node.get("type") == _TYPE_MODELS[model] and parent_key == "source"
    if model in _KEY_MODELS:
        return parent_key in _KEY_MODELS[model]
    if model in _KIND_MODELS:
        union = _UNION_KEYS.get(parent_key or "")
        in_union = union is not None and model.startswith(union)
        return node.get("kind") == _KIND_MODELS[model] and (in_union or (union is None and not _in_unions(model)))
    return False


def _signature(node: dict[str, Any], parent_key: str | None) -> tuple[Any, ...]:
    """Everything `_is` looks at: nodes with one signature are nodes of the same models."""
    kind, type_ = node.get("kind"), node.get("type")
    return (
        parent_key,
        kind if isinstance(kind, str) else None,  # a non-string tag matches no model (and may not be hashable)
        type_ if isinstance(type_, str) else None,
        "messages" in node,
        "role" in node and "content" in node,
    )


MATCH_CACHE = 16384
"""Entries kept by each cache of which models a node signature is (few signatures and loss lists recur)."""


_Plan = tuple[list[tuple[str, None]], list[tuple[str, str]], set[str], list[tuple[str, str]]]
"""What `_live` looks for in a node of one signature: its models (as found pairs), the (model, field) pairs to
look for, their fields, the valued (model, field) pairs to read. Shared: read only."""


class _Wanted:
    """The losses a call applies, with what `_live` looks for in the trees (made once per list of keys)."""

    def __init__(self, losses: Sequence[Loss]) -> None:
        self.losses = tuple(losses)
        self.fields: dict[str, set[str]] = {}
        """Each model's fields that some loss removes."""
        self.valued: dict[str, set[str]] = {}
        """Each model's fields that some loss removes when they hold a given value."""
        for loss in losses:
            self.fields.setdefault(loss.model, set()).update([loss.field] if loss.field else [])
            self.valued.setdefault(loss.model, set()).update([loss.field] if loss.field and loss.value else [])
        self.names = tuple(self.fields)
        self.needs = [
            (loss, (loss.model, loss.field), None if loss.value is None else (loss.model, loss.field or "", loss.value))
            for loss in losses
        ]
        """Each loss, the (model, field) it needs found, and the (model, field, value) when it is valued."""
        self.plans: dict[tuple[Any, ...], _Plan] = {}
        """Each node signature's `plan`, kept for every call with these losses."""

    def plan(self, node: dict[str, Any], parent_key: str | None, signature: tuple[Any, ...]) -> _Plan:
        """What `_live` looks for in a node of this signature (made once, then read from `plans`)."""
        plan = self.plans.get(signature)
        if plan is None:
            models = [model for model in self.names if _is(node, parent_key, model)]
            pending = [(model, field) for model in models for field in self.fields[model]]
            plan = (
                [(model, None) for model in models],
                pending,
                {field for _, field in pending},
                [(model, field) for model in models for field in self.valued[model]],
            )
            if len(self.plans) >= MATCH_CACHE:
                self.plans.clear()
            self.plans[signature] = plan
        return plan


def _live(trees: Sequence[Any], wanted: _Wanted, root_key: str | None) -> list[Loss]:
    """The losses that can find something to remove in one of the trees, in order (one walk for all of them).

    Stripping only removes nodes and fields (a dropped dict value becomes None), so a model, a field or a field
    value absent from both trees stays absent after any earlier strip: skipping its loss changes nothing, and
    saves one or two walks of both trees per key. Kept in step with `_strip` by tests/diff/test_fast_paths.py.
    """
    # By node signature: [the (model, field) pairs of its models not found yet, their fields, the valued pairs to read].
    state: dict[tuple[Any, ...], list[Any]] = {}
    found: set[tuple[str, str | None]] = set()
    values: set[tuple[str, str, str]] = set()
    orphans = False  # a part without its source: every strip drops it, so every loss must run
    plans = wanted.plans

    def visit(node: dict[str, Any], parent_key: str | None) -> None:
        signature = _signature(node, parent_key)
        seen = state.get(signature)
        if seen is None:
            models, pending, names, read = plans.get(signature) or wanted.plan(node, parent_key, signature)
            found.update(models)
            seen = state[signature] = [pending, names, read]
        pending, names_pending, read = seen
        if pending and not names_pending.isdisjoint(node.keys()):
            found.update(pair for pair in pending if pair[1] in node)
            seen[0] = [pair for pair in pending if pair not in found]
            seen[1] = {field for _, field in seen[0]}
        for model, field in read:
            # As `_has_value` reads it; a dict may yet become None when a whole model is dropped.
            values.add((model, field, str(node.get(field))))
            if isinstance(node.get(field), dict):
                values.add((model, field, "None"))
        for key, value in node.items():
            if isinstance(value, dict):
                visit(value, key)
            elif isinstance(value, list):
                visit_list(value, key)

    def visit_list(items: list[Any], parent_key: str | None) -> None:
        nonlocal orphans
        for item in items:
            if isinstance(item, dict):
                if "source" in item and item["source"] is None:
                    orphans = True
                visit(item, parent_key)
            elif isinstance(item, list):
                visit_list(item, parent_key)

    for tree in trees:
        if isinstance(tree, dict):
            visit(tree, root_key)
        elif isinstance(tree, list):
            visit_list(tree, root_key)
    if orphans:
        return list(wanted.losses)
    return [loss for loss, need, value in wanted.needs if need in found and (value is None or value in values)]


def _in_unions(model: str) -> bool:
    return any(model.startswith(u) for u in _UNION_KEYS.values())


def _has_value(tree: Any, loss: Loss, parent_key: str | None = None) -> bool:
    if isinstance(tree, dict):
        if _is(tree, parent_key, loss.model) and str(tree.get(loss.field or "")) == loss.value:
            return True
        return any(_has_value(v, loss, k) for k, v in tree.items())
    if isinstance(tree, list):
        return any(_has_value(v, loss, parent_key) for v in tree)
    return False


def _strip(tree: Any, loss: Loss, parent_key: str | None = None) -> Any:
    if isinstance(tree, list):
        kept = [x for x in tree if not (loss.field is None and isinstance(x, dict) and _is(x, parent_key, loss.model))]
        stripped = [_strip(x, loss, parent_key) for x in kept]
        # A part whose required child was dropped (an image whose URL source is not carried) goes with it.
        return [x for x in stripped if not (isinstance(x, dict) and "source" in x and x["source"] is None)]
    if not isinstance(tree, dict):
        return tree
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict) and loss.field is None and _is(value, key, loss.model):
            out[key] = None  # as the other side has it when the protocol could not carry the value at all
            continue
        out[key] = _strip(value, loss, key)
    if loss.field is not None and _is(tree, parent_key, loss.model):
        out.pop(loss.field, None)
    return out


# Fields `_is` and the orphan rule look at: a loss that removes one changes which later losses apply to a node,
# so it is applied on its own, never fused with others.
_SIGNATURE_FIELDS = frozenset({"kind", "type", "messages", "role", "content"})


def _fusable(loss: Loss) -> bool:
    return loss.field not in _SIGNATURE_FIELDS


class _Fused:
    """Losses applied in one walk of a tree. What each loss does at a node depends only on the node's signature
    (which none of them changes: no signature field is removed), so applying them together at each node gives
    what applying them one after the other gives (`tests/diff/test_fast_paths.py` checks it against `_strip`)."""

    def __init__(self, losses: Sequence[Loss]) -> None:
        self.losses = losses
        self._plans: dict[tuple[Any, ...], tuple[bool, tuple[str, ...]]] = {}
        """Each node signature's plan (bounded: a tree's signatures are few, but a caller's keys may vary)."""

    def _plan(self, node: dict[str, Any], parent_key: str | None) -> tuple[bool, tuple[str, ...]]:
        """(whether some loss drops the node, the fields the others remove from it)."""
        signature = _signature(node, parent_key)
        plan = self._plans.get(signature)
        if plan is None:
            matched = [loss for loss in self.losses if _is(node, parent_key, loss.model)]
            drop = any(loss.field is None for loss in matched)
            fields = tuple(dict.fromkeys(loss.field for loss in matched if loss.field is not None))
            if len(self._plans) >= MATCH_CACHE:
                self._plans.clear()
            plan = self._plans[signature] = (drop, fields)
        return plan

    def strip(self, tree: Any, parent_key: str | None) -> Any:
        """The tree without what the losses remove, changed in place (the caller owns it) and given back."""
        if isinstance(tree, list):
            kept = []
            plans = self._plans
            for item in tree:
                if isinstance(item, dict):
                    # `self._plan(item, parent_key)`, its lookup inlined: a stream is a long list of small dicts
                    drop, fields = plans.get(_signature(item, parent_key)) or self._plan(item, parent_key)
                    if drop:
                        continue
                    self._strip_dict(item, fields)
                    # A part whose required child was dropped (an image whose URL source is not carried) goes too.
                    if "source" in item and item["source"] is None:
                        continue
                elif isinstance(item, list):
                    self.strip(item, parent_key)
                kept.append(item)
            tree[:] = kept
        elif isinstance(tree, dict):
            self._strip_dict(tree, self._plan(tree, parent_key)[1])
        return tree

    def _strip_dict(self, node: dict[str, Any], fields: tuple[str, ...]) -> None:
        """`node` without what the losses remove: `fields`, the node's own plan (made before anything in it
        changed), and what they remove below it."""
        for key, value in node.items():
            if isinstance(value, dict):
                drop, inner = self._plans.get(_signature(value, key)) or self._plan(value, key)
                if drop:
                    node[key] = None  # as the other side has it when the protocol could not carry the value at all
                else:
                    self._strip_dict(value, inner)
            elif isinstance(value, list):
                self.strip(value, key)
        for field in fields:
            node.pop(field, None)


@functools.lru_cache(maxsize=2048)
def _fused(losses: tuple[Loss, ...]) -> _Fused:
    """One `_Fused` per list of losses, so that its plans serve every case with these losses."""
    return _Fused(losses)


def apply_losses(
    left: Any,
    right: Any,
    keys: Iterable[str],
    *,
    scope: Scope | None = None,
    root_key: str | None = None,
    owned: bool = False,
) -> tuple[Any, Any]:
    """Both sides without what the keys say is not carried in `scope` (None: every key applies). `root_key`
    names what the roots are. The sides are copied first, unless the caller owns them (`owned`): they are then
    changed in place and given back.

    The keys apply in order; consecutive ones are applied in one walk of each side. A valued key
    (`Model.field:value`) applies only when either side still has that value where it comes in the order, so
    the losses before it are applied first.
    """
    a, b = (left, right) if owned else (json_copy(left), json_copy(right))
    wanted = _wanted(tuple(keys), scope)
    batch: list[Loss] = []

    def flush() -> None:
        nonlocal a, b
        if batch:
            fused = _fused(tuple(batch))
            a, b = fused.strip(a, root_key), fused.strip(b, root_key)
            batch.clear()

    for loss in _live((a, b), wanted, root_key):
        if loss.value is not None:
            flush()
            if not (_has_value(a, loss, root_key) or _has_value(b, loss, root_key)):
                continue
        if not _fusable(loss):
            flush()
            batch.append(loss)
            flush()
            continue
        batch.append(loss)
    flush()
    return a, b


@functools.lru_cache(maxsize=2048)  # a run's cases name the same lists of keys (two for each protocol pair)
def _wanted(keys: tuple[str, ...], scope: Scope | None) -> _Wanted:
    """The parsed losses of `keys` (with their event twins) that apply in `scope`."""
    return _Wanted(
        [loss for loss in _expand(parse_loss(key) for key in keys) if scope is None or loss.scope in (None, scope)]
    )


def _expand(losses: Iterable[Loss]) -> list[Loss]:
    out = []
    for loss in losses:
        out.append(loss)
        for twin in _EVENT_TWINS.get(loss.model, ()):
            if loss.field is None or loss.field in _fields(twin):
                out.append(Loss(twin, loss.field, loss.value, loss.scope))
    return out


def valid_keys(keys: Iterable[str]) -> list[str]:
    """The keys that follow the grammar (malformed ones are reported by tests, not applied)."""
    return list(_valid_keys(tuple(keys)))


@functools.lru_cache(maxsize=256)  # a codec's table, for every case through it
def _valid_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for key in keys:
        try:
            parse_loss(key)
        except LossKeyError:
            continue
        out.append(key)
    return tuple(out)
