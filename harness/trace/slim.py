"""Slim traces: a case that needs no triage (a pass without wire deviations, an unsupported case) is kept without
the heavy parts of its runs (requests, events, the SDK's view, the raw wire), so a full matrix's report stays
small and the parent of worker processes holds little. What the report shows of every case survives: the
verdict, the checks, each run's status and timings, and its time to first token."""

from __future__ import annotations

from harness.trace.arrivals import first_token_ms
from harness.trace.model import CaseResult, RunTrace, Verdict

KEEP = ("failing", "all")
"""`--keep-traces` choices: whole traces for the cases that need triage only (the default), or for every case."""


def needs_triage(result: CaseResult) -> bool:
    """Whether a case is kept whole under `--keep-traces failing`: anything but a clean pass or an unsupported case
    (proxy bugs, harness errors, backend and baseline issues, and passes with wire deviations)."""
    if result.verdict is Verdict.UNSUPPORTED:
        return False
    return not (result.verdict is Verdict.PASS and not result.deviations)


def slim_run(run: RunTrace) -> RunTrace:
    """The run without its requests, events, SDK view and wire; its time to first token kept in its timings."""
    timings = run.timings.model_copy(update={"first_token_ms": first_token_ms(run)})
    return RunTrace(
        case_id=run.case_id,
        role=run.role,
        scenario=run.scenario,
        client=run.client,
        upstream=run.upstream,
        mode=run.mode,
        stream=run.stream,
        trace_id=run.trace_id,
        upstream_status=run.upstream_status,
        checks=run.checks,
        grammar=run.grammar,
        status=run.status,
        error=run.error,
        timings=timings,
        deviations=run.deviations,
        unreached=run.unreached,
    )


SlimRuns = dict[int, tuple[RunTrace, RunTrace]]
"""Runs already slimmed, by the id of the run (kept with it, so the id stays its own): a baseline run is shared by
every case of its unit, and is slimmed once."""


def slim(result: CaseResult, done: SlimRuns | None = None) -> CaseResult:
    """The case with slim runs (see the module); `done`: runs already slimmed, added to."""
    done = {} if done is None else done
    runs = {}
    for role, run in result.runs.items():
        seen = done.get(id(run))
        if seen is None or seen[0] is not run:
            seen = done[id(run)] = (run, slim_run(run))
        runs[role] = seen[1]
    return result.model_copy(update={"runs": runs})
