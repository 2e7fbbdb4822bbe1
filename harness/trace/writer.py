"""Trace JSON: schema generation, validation, and atomic writes.

Two checks, one contract. The trace models (pydantic, compiled to native code) guarantee a trace's structure, and
their JSON Schema is generated from them; `tests/trace/test_schema_agreement.py` proves the two agree (every
trace the models build is schema-valid and parses back equal; around it, the models in strict mode accept what
the schema accepts). So a trace the models wrote needs no check on the way out, and the cheap check is the
models' own, in strict mode, where a trace comes in: from a worker process (the parent parses what each worker
sends) and from disk (`read_case`, for `conformance report` and `--merge`), at about a millisecond for a large
case. The full check, `jsonschema` against the published schema, costs 10-1000 ms a case: it runs when asked
(`--validate-traces`, on writing and on reading) and on the traces `conformance diff` reads.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import zlib
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from pydantic import ValidationError

from harness.ir.schema import require_tags
from harness.trace.bound import bounded
from harness.trace.model import CaseResult, RunTrace


class TraceError(ValueError):
    """A trace that does not validate against its schema; names the file and the failing path."""


@cache
def case_schema() -> dict[str, Any]:
    """JSON Schema of a case result (which embeds the run traces)."""
    return require_tags(CaseResult.model_json_schema(by_alias=True))


@cache
def run_schema() -> dict[str, Any]:
    """JSON Schema of one run trace."""
    return require_tags(RunTrace.model_json_schema(by_alias=True))


@cache
def _validator(which: str) -> jsonschema.protocols.Validator:
    schema = case_schema() if which == "case" else run_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate(data: dict[str, Any], which: str = "case") -> None:
    """Raise TraceError when `data` does not match the case (or run) schema."""
    error = jsonschema.exceptions.best_match(_validator(which).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise TraceError(f"{which} trace invalid at {where}: {error.message}")


TRACE_SUFFIX = ".json.gz"
"""Case traces are gzip-compressed JSON (about a tenth of the text); `read_case` also reads plain `.json` ones."""
GZIP_LEVEL = 5
"""Nearly level 9's size at a fraction of its time: a full matrix writes some 14,000 traces."""


def atomic_write_text(path: Path, text: str) -> None:
    """Write a file so that readers see either the old or the whole new content, never a part."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write a file so that readers see either the old or the whole new content, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; reports are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def case_text(result: CaseResult) -> str:
    """The text of a case's trace file (indented JSON, fields in model order)."""
    return bounded(result.model_dump_json(indent=1, by_alias=True))


def parse_case(text: str | bytes, where: str = "case trace", *, full_check: bool = False) -> CaseResult:
    """A case result from its trace text, checked by the models in strict mode (and, with `full_check`, against
    the JSON Schema too); TraceError names `where` and the failing path."""
    try:
        result = CaseResult.model_validate_json(text, strict=True)
    except ValidationError as exc:
        error = exc.errors()[0]
        if error["type"] == "json_invalid":
            raise TraceError(f"{where}: cannot read trace: {error['msg']}") from None
        path = "/".join(str(part) for part in error["loc"]) or "(root)"
        raise TraceError(f"{where}: case trace invalid at {path}: {error['msg']}") from None
    if full_check:
        try:
            validate(json.loads(text), "case")
        except TraceError as exc:
            raise TraceError(f"{where}: {exc}") from exc
    return result


def write_case(result: CaseResult, folder: Path, *, full_check: bool = False) -> Path:
    """Atomically write a case result as `<folder>/<case file>.json` (`full_check`: checked against the JSON
    Schema first); returns the path."""
    text = case_text(result)
    if full_check:
        parse_case(text, result.case_id, full_check=True)
    return write_case_text(result.case_id, text, folder)


def write_case_text(case_id: str, text: str, folder: Path) -> Path:
    """Atomically write a case trace's text (`case_text`), gzip-compressed, as `<folder>/<case file>.json.gz`."""
    path = case_path(folder, case_id)
    atomic_write_bytes(path, gzip.compress(text.encode("utf-8"), compresslevel=GZIP_LEVEL, mtime=0))
    return path


def case_path(folder: Path, case_id: str) -> Path:
    """Where a case's trace is written in a run's `cases` folder."""
    return folder / f"{case_file_name(case_id)}{TRACE_SUFFIX}"


def read_trace_bytes(path: Path) -> bytes:
    """A trace file's JSON bytes, gunzipped when the file is compressed; TraceError naming the file otherwise."""
    try:
        data = path.read_bytes()
        return gzip.decompress(data) if path.name.endswith(".gz") else data
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise TraceError(f"{path}: cannot read trace: {exc}") from exc


def read_case(path: Path, *, full_check: bool = False) -> CaseResult:
    """Read and check a case result file, compressed or not (`full_check`: against the JSON Schema as well)."""
    return parse_case(read_trace_bytes(path), str(path), full_check=full_check)


def case_file_name(case_id: str) -> str:
    """A file-system-safe name for a case id like `text-basic[anthropic->openai,stream]`."""
    return case_id.replace("[", "__").replace("]", "").replace("->", "-to-").replace(",", "_").replace("/", "_")
