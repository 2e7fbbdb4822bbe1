"""Trace packs: the cases of one scenario and streaming mode that need no triage (clean passes, unsupported cases)
are written together, one compact JSON line each, in one gzip file of the run's `cases` folder. Each case file
costs a disk block of its own (a full matrix wrote 14,000 of them: 75 MB on disk for 34 MB of data), and one
gzip stream over a hundred similar traces is about four times smaller than a hundred. A case that needs triage
keeps a file of its own, which `conformance diff` and the report's commands name."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from pathlib import Path

from harness.trace.bound import LARGE_CHARS, bounded
from harness.trace.identity import stream_mode
from harness.trace.model import CaseResult
from harness.trace.slim import needs_triage
from harness.trace.writer import (
    GZIP_LEVEL,
    TRACE_SUFFIX,
    TraceError,
    atomic_write_bytes,
    case_file_name,
    parse_case,
    read_trace_bytes,
)

PACK_SUFFIX = ".pack.jsonl.gz"
"""A pack's file name ends so: gzip-compressed JSON lines, one case trace per line."""


def pack_name(scenario: str, stream: bool) -> str:
    """The file name of the pack of one scenario and streaming mode."""
    return f"{case_file_name(scenario)}__{stream_mode(stream)}{PACK_SUFFIX}"


def trace_file(result: CaseResult) -> str:
    """The name of the file in a run's `cases` folder that holds a case's trace: its pack when it needs no triage,
    else a file of its own."""
    if needs_triage(result):
        return f"{case_file_name(result.case_id)}{TRACE_SUFFIX}"
    return pack_name(result.scenario, result.stream)


def pack_line(result: CaseResult) -> str:
    """A case's trace as one line of a pack (compact JSON: a newline inside a string is escaped), within the bound
    every trace keeps (`bound`: a huge answer's strings and event lists cut)."""
    text = result.model_dump_json(by_alias=True)
    if len(text) <= LARGE_CHARS:
        return text
    return json.dumps(json.loads(bounded(text)), ensure_ascii=False, separators=(",", ":"))


def write_pack(folder: Path, name: str, lines: Iterable[str]) -> Path:
    """Atomically write a pack of `pack_line` texts as `<folder>/<name>`; returns the path."""
    path = folder / name
    data = "".join(f"{line}\n" for line in lines).encode("utf-8")
    atomic_write_bytes(path, gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0))
    return path


def trace_files(folder: Path) -> list[Path]:
    """The trace files of a `cases` folder (packs, and case files compressed or not), sorted by name."""
    if not folder.is_dir():
        return []
    return sorted([*folder.glob(f"*{TRACE_SUFFIX}"), *folder.glob("*.json"), *folder.glob(f"*{PACK_SUFFIX}")])


def is_pack(path: Path) -> bool:
    """Whether a file of a `cases` folder is a pack."""
    return path.name.endswith(PACK_SUFFIX)


def read_cases(path: Path, *, full_check: bool = False) -> list[CaseResult]:
    """The case results a trace file holds: every line of a pack, or the one case of a case file; each checked
    by the models in strict mode (`full_check`: against the JSON Schema as well). TraceError names the file (and
    the line of a pack) when one cannot be read."""
    data = read_trace_bytes(path)
    if not is_pack(path):
        return [parse_case(data, str(path), full_check=full_check)]
    lines = data.split(b"\n")
    if lines[-1]:
        raise TraceError(f"{path}: cannot read trace pack: it ends inside a line (a truncated file)")
    return [
        parse_case(line, f"{path} line {number}", full_check=full_check)
        for number, line in enumerate(lines[:-1], start=1)
    ]
