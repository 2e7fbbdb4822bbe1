"""The provider's own wire spec, vendored (see PROVENANCE.json and docs/specs.md)."""
