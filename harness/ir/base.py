"""The one base class every IR model shares: frozen, strict about unknown fields, documented."""

from __future__ import annotations

from typing import Any, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict

JSONValue: TypeAlias = Any
"""Any JSON value (object, array, string, number, boolean, null)."""

JSONObject: TypeAlias = dict[str, Any]
"""A JSON object."""

ProviderExtras: TypeAlias = dict[str, JSONObject]
"""What a provider's wire said beyond the IR, keyed by the registry name of the protocol that decoded it (a
JSON object shaped like the wire object it came from). Only that protocol's encoder writes it back; every
other protocol ignores it, so a translation never forwards one provider's fields to another."""


def merge_extras(older: ProviderExtras | None, newer: ProviderExtras | None) -> ProviderExtras | None:
    """Both sets of extras, `newer` winning key by key (objects merged recursively); None when both are None."""
    if older is None or newer is None:
        return newer if older is None else older
    out = dict(older)
    for protocol, fields in newer.items():
        out[protocol] = merge_objects(out.get(protocol, {}), fields)
    return out


def fill_missing(obj: JSONObject, extras: JSONObject) -> JSONObject:
    """`obj` with what `extras` has and it lacks added after its own keys (nested objects filled alike); `obj`'s
    values win. How an encoder writes a provider's extras into the wire object it built."""
    out = dict(obj)
    for key, value in extras.items():
        mine = out.get(key)
        if key not in out:
            out[key] = value
        elif isinstance(mine, dict) and isinstance(value, dict):
            out[key] = fill_missing(mine, value)
    return out


def merge_objects(base: JSONObject, top: JSONObject) -> JSONObject:
    """`top` laid over `base`: nested objects merge, any other value of `top` replaces `base`'s."""
    out = dict(base)
    for key, value in top.items():
        below = out.get(key)
        out[key] = merge_objects(below, value) if isinstance(below, dict) and isinstance(value, dict) else value
    return out


class IRModel(BaseModel):
    """Base of all IR models: immutable, no unknown fields, attribute docstrings become schema descriptions."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        use_attribute_docstrings=True,
        validate_default=False,
        populate_by_name=True,
    )


M = TypeVar("M", bound=IRModel)
_new = object.__new__
# BaseModel's own slots, set through their descriptors (a frozen model refuses `setattr`).
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def built(cls: type[M], values: dict[str, Any], fields_set: set[str]) -> M:
    """An instance of `cls` holding `values` as they stand, without pydantic's validation: what validated
    construction makes when `values` are already what validation would keep (exactly typed, every field in
    definition order, defaults included) and `fields_set` names the keyword arguments it was given. For the
    hottest events only (a run builds hundreds of deltas, each validated in a few microseconds); the caller must
    check the types and validate anything else (`events.delta`, held equal to validated construction by tests)."""
    model = _new(cls)
    model.__dict__.update(values)
    _set_fields_set(model, fields_set)
    _set_extra(model, None)
    _set_private(model, None)
    return model
