"""The commands a report offers for one case: `conformance run` narrowed to exactly that case (with the options of
the run that shape every case), and `conformance diff` on its trace file, as the verdict compared it."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from harness.trace.identity import stream_mode
from harness.trace.model import CaseResult
from harness.trace.writer import case_path


def rerun_command(case: CaseResult, options: Sequence[str] = ()) -> str:
    """`conformance run --scenario S --frontend F --backend B --streaming M [run options]` (and `--transport ws` for
    a WebSocket-mode case): the case on the same system under test. Words before the first option name another
    command that starts that system itself (`["gateway", "litellm", ...]`: `conformance gateway litellm --scenario
    S ...`); without them it is `run`, with `--sut URL` among the options when the run had one."""
    words = list(options)
    head = next((i for i, word in enumerate(words) if word.startswith("-")), len(words))
    command, rest = words[:head] or ["run"], words[head:]
    args = ["conformance", *command, "--scenario", case.scenario, "--frontend", case.frontend]
    args += ["--backend", case.backend, "--streaming", stream_mode(case.stream), *rest]
    if case.transport == "ws":  # a WebSocket-mode case (`--transport ws`)
        args += ["--transport", "ws"]
    return shlex.join(args)


def trace_path(case: CaseResult, report_dir: Path | str) -> str:
    """The case's trace file under the report folder, as a command line names it."""
    return str(case_path(Path(report_dir) / "cases", case.case_id))


def diff_command(case: CaseResult, report_dir: Path | str) -> str:
    """`conformance diff` of the translated run against the frontend baseline, both from the case's trace."""
    path = trace_path(case, report_dir)
    return shlex.join(
        ["conformance", "diff", path, path, "--left-role", "baseline_frontend", "--right-role", "translated"]
    )


def shown_dir(path: Path) -> str:
    """A report folder as the user would type it from the current folder (relative when below it)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
