"""A scenario that contradicts itself is an error, not a backend issue (issue 22).

A baseline run is a client's SDK against a recording. When that recording is the reference backend's (cassette
`metadata.source: reference`, the scenario's scripted reply rendered by the harness) and the client is that
protocol's own SDK, a failed check means the scenario's expectations contradict its own reply: every case of it
would end as `backend_issue` or `baseline_issue` and the gate would pass with the scenario silently off. Such a
case becomes a harness error (exit 2) naming the scenario and the check. A recording of a real provider
(`source: real`, from `conformance record --source real` or `conformance import`) keeps its verdict: there the
backend really answered so. So does a profile read through another protocol's SDK (its reference backend emulates
a real provider's deviation on purpose: qwen's XML tool calls, llama.cpp's missing cache counts).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from harness.trace.model import CaseResult, RunTrace, Verdict

BASELINES = ("baseline_frontend", "baseline_backend")
REFERENCE = "reference"
HEAD_BYTES = 4096
"""A cassette's metadata is at its top; only that much of it is read."""


@lru_cache(maxsize=256)
def cassette_source(path: Path) -> str | None:
    """`metadata.source` of a cassette (None: no such file, no metadata, or unreadable)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES).decode("utf-8", "replace")
        doc = yaml.safe_load(head.split("\ninteractions:", 1)[0])
    except (OSError, yaml.YAMLError):
        return None
    metadata = doc.get("metadata") if isinstance(doc, dict) else None
    source = metadata.get("source") if isinstance(metadata, dict) else None
    return source if isinstance(source, str) else None


def _failures(trace: RunTrace) -> list[str]:
    return [c.name for c in trace.checks if not c.passed] + [g.split(" ", 1)[0] for g in trace.grammar]


def contradiction(result: CaseResult, cassettes: Path) -> str | None:
    """Why this case's scenario contradicts itself (a baseline fails its checks on a reference recording), or None."""
    if result.verdict in (Verdict.UNSUPPORTED, Verdict.HARNESS_ERROR):
        return None
    for role in BASELINES:
        trace = result.runs.get(role)
        # Only a protocol read by its own SDK: a profile read through another's (qwen's XML tool calls, llama.cpp's
        # missing cache counts, through the OpenAI SDK) emulates a real provider's deviation, a backend issue.
        if trace is None or trace.status == "error" or not trace.wire.cassette or trace.client != trace.upstream:
            continue
        failed = _failures(trace)
        if failed and cassette_source(cassettes / trace.wire.cassette) == REFERENCE:
            return (
                f"scenario error: {result.scenario} contradicts itself: its {trace.client} baseline fails check "
                f"{', '.join(failed)} on the reference {trace.upstream} recording ({trace.wire.cassette}); fix the "
                "scenario's expectations or its scripted reply"
            )
    return None


def checked(result: CaseResult, cassettes: Path) -> CaseResult:
    """The result, or a harness error naming the check when its scenario contradicts itself."""
    why = contradiction(result, cassettes)
    if why is None:
        return result
    return result.model_copy(update={"verdict": Verdict.HARNESS_ERROR, "reason": why, "known": None})
