"""Trace JSON: the identity of a case and a run, the model of a run and a case (with its verdict), its JSON
Schema, validated atomic writes."""

from harness.trace.identity import MODES, Case, Mode, Recording, Run, RunRole, matrix_order, route_name, stream_mode
from harness.trace.model import CaseResult, Check, DivergenceJSON, RunTrace, SdkView, Timings, Verdict, Wire
from harness.trace.pack import pack_name, read_cases, trace_file, trace_files
from harness.trace.writer import (
    TraceError,
    case_path,
    case_schema,
    case_text,
    parse_case,
    read_case,
    read_trace_bytes,
    run_schema,
    validate,
    write_case,
)

__all__ = [
    "MODES",
    "Case",
    "CaseResult",
    "Check",
    "DivergenceJSON",
    "Mode",
    "Recording",
    "Run",
    "RunRole",
    "RunTrace",
    "SdkView",
    "Timings",
    "TraceError",
    "Verdict",
    "Wire",
    "case_path",
    "case_schema",
    "case_text",
    "matrix_order",
    "pack_name",
    "parse_case",
    "read_case",
    "read_cases",
    "read_trace_bytes",
    "route_name",
    "run_schema",
    "stream_mode",
    "trace_file",
    "trace_files",
    "validate",
    "write_case",
]
