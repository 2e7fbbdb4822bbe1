"""Record the cassettes a matrix needs from the reference backends, per record mode, before it runs."""

from __future__ import annotations

from harness.record import RecordMode, record_one, reference_source
from harness.record.layout import cassette_path
from harness.runner.run import Runner


def record_missing(runner: Runner, mode: str) -> int:
    """(Re-)record what `mode` asks for, for every (backend, scenario, streaming) the matrix uses; returns the
    number of cassettes written or refreshed."""
    record_mode = RecordMode(mode)
    source = reference_source(runner.scenarios)
    count = 0
    needed = sorted({(key[2], key[3], key[4]) for key in runner.planned_runs()})
    by_id = {s.id: s for s in runner.scenarios}
    for backend, scenario_id, stream in needed:
        scenario = by_id[scenario_id]
        if scenario.kind == "models_list":
            continue
        path = cassette_path(runner.options.cassettes, backend, scenario_id, stream)
        existed = path.is_file()
        if existed and record_mode is RecordMode.ONCE:
            continue
        record_one(
            backend,
            scenario,
            stream,
            scenarios=runner.scenarios,
            root=runner.options.cassettes,
            source=source,
            mode=record_mode,
        )
        count += 1
    return count
