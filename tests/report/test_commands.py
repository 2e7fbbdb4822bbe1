"""The rerun command a report prints reproduces the case on the same system under test (issue 22): a gateway
case reruns the gateway, a `--sut` case the same URL (never its password, a key or a header value), and both
survive `conformance report --run` re-rendering, also from the run's plan when its summary is gone."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
from pathlib import Path

from harness.cli.gateway import gateway_rerun
from harness.cli.run import rerun_options
from harness.report import emit, events_for_run, file_writers
from harness.report.commands import rerun_command
from harness.runner.folder import write_plan
from harness.runner.run_events import MatrixStarted
from harness.trace import write_case
from tests.report.factory import RUN_ID, sample_cases, sample_events, text_bug


def _args(command: str, *argv: str) -> argparse.Namespace:
    from harness.cli import build_parser

    return build_parser().parse_args([command, *argv])


def test_a_run_without_a_sut_reruns_the_built_in_proxy() -> None:
    case = text_bug()
    assert shlex.split(rerun_command(case, ["--strict"]))[:2] == ["conformance", "run"]
    assert rerun_command(case, ["--strict"]).endswith(
        f"--streaming {'stream' if case.stream else 'nonstream'} --strict"
    )


def test_a_gateway_case_reruns_the_gateway_not_the_built_in_proxy() -> None:
    case = text_bug()
    options = gateway_rerun(_args("gateway", "litellm", "--home", "/opt/gw", "--known", "k.toml"))
    assert options == ["gateway", "litellm", "--home", "/opt/gw", "--known", "k.toml"]
    words = shlex.split(rerun_command(case, options))
    assert words[:3] == ["conformance", "gateway", "litellm"]
    assert words[3:11] == ["--scenario", case.scenario, "--frontend", case.frontend, "--backend", case.backend,
                           "--streaming", "stream" if case.stream else "nonstream"]  # fmt: skip
    assert words[11:] == ["--home", "/opt/gw", "--known", "k.toml"]


def test_a_sut_case_reruns_the_same_url_without_its_password_or_header_values() -> None:
    args = _args(
        "run", "--sut", "http://alice:pw-0042@127.0.0.1:4000", "--sut-header", "x-portkey-api-key=hdr-secret-77",
        "--client-key-env", "GW_KEY",
    )  # fmt: skip
    options = rerun_options(args)
    command = rerun_command(text_bug(), options)
    assert "--sut http://127.0.0.1:4000" in command and "--client-key-env GW_KEY" in command
    assert "pw-0042" not in command and "alice" not in command and "hdr-secret-77" not in command


def test_the_gateway_rerun_survives_a_rerender_also_without_the_summary(tmp_path: Path) -> None:
    folder = tmp_path / RUN_ID
    cases = sample_cases()
    for case in cases:
        write_case(case, folder / "cases")
    options = ["gateway", "portkey", "--home", "/opt/pk"]
    events = sample_events()
    started = events[0]
    assert isinstance(started, MatrixStarted)
    events[0] = dataclasses.replace(started, rerun=options)
    emit(events, file_writers(folder))
    write_plan(folder, RUN_ID, [c.case_id for c in cases], options)
    first = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert first["groups"] and all(g["rerun"].startswith("conformance gateway portkey ") for g in first["groups"])
    for keep_summary in (True, False):
        if not keep_summary:
            (folder / "summary.json").unlink()
        again = events_for_run(folder)[0]
        assert isinstance(again, MatrixStarted) and list(again.rerun) == options


def test_a_websocket_case_reruns_over_websocket() -> None:
    case = text_bug().model_copy(update={"transport": "ws"})
    assert shlex.split(rerun_command(case, ["--strict"]))[-2:] == ["--transport", "ws"]
    assert "--transport" not in rerun_command(text_bug(), ["--strict"])
