"""The fault catalog: named, switchable proxy bugs modelled on real ones, and the selftest that proves the gate
catches each of them (`conformance selftest`)."""

from harness.faults.catalog import FAULTS, by_name, catalog_hooks
from harness.faults.fault import Fault, Scope

__all__ = ["FAULTS", "Fault", "Scope", "by_name", "catalog_hooks"]
