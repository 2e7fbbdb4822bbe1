"""JSON Schemas of a protocol's wire shapes, shipped as `<name>.json` files inside the protocol's `schemas` package.

A protocol's `schemas/__init__.py` declares which documents a caller may ask for and binds one `SchemaSet`:

    _SET = SchemaSet(__name__, NAMES)
    load_schema, validator, validate = _SET.load, _SET.validator, _SET.validate

Documents reference each other by their `$id` (e.g. `defs.json#/$defs/message`), so every document of the set,
the shared ones (`defs`) included, is registered under its own `$id`. `jsonschema` is imported only when a
validator is first asked for: codecs never validate, and their import stays light.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from referencing import Registry


class SchemaSet:
    """The Draft 2020-12 schemas of one package: loaded by name, cross-file references resolved, validators cached."""

    def __init__(self, package: str, names: tuple[str, ...], *, shared: tuple[str, ...] = ("defs",)) -> None:
        self.package = package
        """Dotted name of the package holding the `.json` files."""
        self.names = names
        """The schemas a caller can validate against."""
        self.shared = shared
        """Documents only referenced by others (loadable, registered, not meant to validate instances)."""
        self._registry: Registry[Any] | None = None
        self._validators: dict[str, Draft202012Validator] = {}

    def load(self, name: str) -> dict[str, Any]:
        """The schema document `name` (one of `names` or `shared`), freshly parsed."""
        if name not in (*self.names, *self.shared):
            raise KeyError(f"{self.package} has no schema {name!r} (known: {', '.join((*self.names, *self.shared))})")
        text = resources.files(self.package).joinpath(f"{name}.json").read_text(encoding="utf-8")
        doc: dict[str, Any] = json.loads(text)
        return doc

    def registry(self) -> Registry[Any]:
        """Every document of the set under its `$id`, for resolving references between files."""
        if self._registry is None:
            from referencing import Registry
            from referencing.jsonschema import DRAFT202012

            pairs = []
            for name in (*self.names, *self.shared):
                doc = self.load(name)
                if not isinstance(doc.get("$id"), str):
                    # Without an `$id` a reference to this file could not resolve: fail here, not mid-validation.
                    raise ValueError(f"{self.package}/{name}.json has no $id")
                pairs.append((doc["$id"], DRAFT202012.create_resource(doc)))
            self._registry = Registry().with_resources(pairs)
        return self._registry

    def validator(self, name: str) -> Draft202012Validator:
        """A (cached) validator for schema `name` that resolves the cross-file references."""
        found = self._validators.get(name)
        if found is None:
            from jsonschema import Draft202012Validator

            found = self._validators[name] = Draft202012Validator(self.load(name), registry=self.registry())
        return found

    def validate(self, name: str, instance: Any) -> None:
        """Raise `jsonschema.ValidationError` if `instance` does not match schema `name`."""
        self.validator(name).validate(instance)
