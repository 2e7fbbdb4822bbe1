"""Record the cassettes a matrix needs from the reference backends, per record mode, before it runs."""

from __future__ import annotations

from harness.record import RecordMode, record_one, reference_source
from harness.runner.engine import Engine


def record_missing(runner: Engine, mode: str) -> int:
    """(Re-)record what `mode` asks for, for every recording the matrix's runs replay; returns the number of
    cassettes written or refreshed."""
    record_mode = RecordMode(mode)
    source = reference_source(runner.scenarios)
    count = 0
    by_id = {s.id: s for s in runner.scenarios}
    for recording in sorted({run.recording for run in runner.planned_runs()}):
        scenario = by_id[recording.scenario]
        if scenario.kind == "models_list":
            continue
        if recording.path(runner.options.cassettes).is_file() and record_mode is RecordMode.ONCE:
            continue
        record_one(
            recording.backend,
            scenario,
            recording.stream,
            scenarios=runner.scenarios,
            root=runner.options.cassettes,
            source=source,
            mode=record_mode,
        )
        count += 1
    return count
