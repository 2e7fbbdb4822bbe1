"""Trace JSON: the model of a run and a case, its JSON Schema, validated atomic writes."""

from harness.trace.model import CaseResult, Check, DivergenceJSON, RunTrace, SdkView, Timings, Wire
from harness.trace.writer import TraceError, case_schema, read_case, run_schema, validate, write_case

__all__ = [
    "CaseResult",
    "Check",
    "DivergenceJSON",
    "RunTrace",
    "SdkView",
    "Timings",
    "TraceError",
    "Wire",
    "case_schema",
    "read_case",
    "run_schema",
    "validate",
    "write_case",
]
