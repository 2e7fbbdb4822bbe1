"""Trace JSON: schema generation, validation with jsonschema, and atomic writes."""

from __future__ import annotations

import json
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from harness.trace.model import CaseResult, RunTrace


class TraceError(ValueError):
    """A trace that does not validate against its schema; names the file and the failing path."""


@cache
def case_schema() -> dict[str, Any]:
    """JSON Schema of a case result (which embeds the run traces)."""
    return CaseResult.model_json_schema(by_alias=True)


@cache
def run_schema() -> dict[str, Any]:
    """JSON Schema of one run trace."""
    return RunTrace.model_json_schema(by_alias=True)


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


def atomic_write_text(path: Path, text: str) -> None:
    """Write a file so that readers see either the old or the whole new content, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; reports are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_case(result: CaseResult, folder: Path) -> Path:
    """Validate and atomically write a case result as `<folder>/<case file>.json`; returns the path."""
    data = result.model_dump(mode="json", by_alias=True)
    validate(data, "case")
    path = folder / f"{case_file_name(result.case_id)}.json"
    atomic_write_text(path, json.dumps(data, indent=1, ensure_ascii=False, sort_keys=False))
    return path


def read_case(path: Path) -> CaseResult:
    """Read and validate a case result file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TraceError(f"{path}: cannot read trace: {exc}") from exc
    try:
        validate(data, "case")
    except TraceError as exc:
        raise TraceError(f"{path}: {exc}") from exc
    return CaseResult.model_validate(data)


def case_file_name(case_id: str) -> str:
    """A file-system-safe name for a case id like `text-basic[anthropic->openai,stream]`."""
    return case_id.replace("[", "__").replace("]", "").replace("->", "-to-").replace(",", "_").replace("/", "_")
