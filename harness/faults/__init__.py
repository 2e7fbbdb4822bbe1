"""The fault catalog: named, switchable proxy bugs modelled on real ones, and the selftest that proves the gate
catches each of them (`conformance selftest`)."""

from harness.faults.catalog import FAULTS, Fault, Scope, by_name, catalog_hooks

__all__ = ["FAULTS", "Fault", "Scope", "by_name", "catalog_hooks"]
