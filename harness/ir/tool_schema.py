"""Equivalent JSON Schemas of tool parameters and response formats: keywords whose empty value JSON Schema defines
as the same as the keyword's absence, so the request diff and the scenarios' request checks agree on them."""

from __future__ import annotations

from typing import Any

# Keywords whose empty value means exactly what their absence means (JSON Schema 2020-12: an empty `properties`
# or `$defs` constrains nothing; `required` "omitted has the same behavior as an empty array").
_EMPTY_MEANS_ABSENT: dict[str, Any] = {"properties": {}, "$defs": {}, "definitions": {}, "required": []}
# Where subschemas sit: maps of them, lists of them, single ones (the walk visits schema positions only).
SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SUBSCHEMAS = ("items", "not", "additionalProperties", "contains", "if", "then", "else")


def schema_without_empties(schema: Any) -> Any:
    """A JSON Schema with every empty `properties` / `$defs` / `definitions` object and empty `required` list
    removed, walked through schema positions only (a property named `properties` is data and stays)."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if not (k in _EMPTY_MEANS_ABSENT and v == _EMPTY_MEANS_ABSENT[k])}
    for key in SUBSCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: schema_without_empties(sub) for name, sub in out[key].items()}
    for key in SUBSCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [schema_without_empties(sub) for sub in out[key]]
    for key in SUBSCHEMAS:
        if isinstance(out.get(key), dict | list):
            sub = out[key]
            out[key] = (
                [schema_without_empties(s) for s in sub] if isinstance(sub, list) else schema_without_empties(sub)
            )
    return out


def tools_without_empties(tools: Any) -> Any:
    """A request's JSON `tools` list with each tool's parameter schema reduced by `schema_without_empties`."""
    if not isinstance(tools, list):
        return tools
    return [
        {**t, "parameters": schema_without_empties(t["parameters"])}
        if isinstance(t, dict) and isinstance(t.get("parameters"), dict)
        else t
        for t in tools
    ]
