"""The one base class every IR model shares: frozen, strict about unknown fields, documented."""

from __future__ import annotations

from typing import Any, TypeAlias

from pydantic import BaseModel, ConfigDict

JSONValue: TypeAlias = Any
"""Any JSON value (object, array, string, number, boolean, null)."""

JSONObject: TypeAlias = dict[str, Any]
"""A JSON object."""


class IRModel(BaseModel):
    """Base of all IR models: immutable, no unknown fields, attribute docstrings become schema descriptions."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        use_attribute_docstrings=True,
        validate_default=False,
        populate_by_name=True,
    )
