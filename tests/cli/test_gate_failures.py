"""Infrastructure failures never pass the gate: `conformance run` in a subprocess (bounded), each failure ending in
exit 2 with one clear line on stderr and no traceback. A deliberately missing cassette, a taken replay port, an
unreachable `--sut`, an unknown frontend, and a `--sut` proxy whose upstreams point at the wrong replay port
(nothing listening there, or another replay server answering in its place: the scout's false pass)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.cli import main
from harness.rig import PLANTED_KEY_ENV
from tests.conftest import REPO
from tests.faults.test_sut import PLANTED, _free_port, serve

RUN_SECONDS = 240


def conformance(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """`python -m harness run ...` in its own process, bounded."""
    env = {**os.environ, "PYTHONPATH": str(REPO), PLANTED_KEY_ENV: PLANTED}
    command = [sys.executable, "-m", "harness", "run", "-q", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_SECONDS, check=False)


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one line the run ended with on stderr (exit 2, no traceback)."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("conformance run: ")
    return lines[0]


def test_unknown_frontend_is_one_line_and_exit_2(tmp_path: Path) -> None:
    line = one_line(conformance("--frontend", "groq", "--scenario", "text-basic", "--reports", str(tmp_path)))
    assert "frontend 'groq': a backend-only profile" in line and "openai" in line
    line = one_line(conformance("--frontend", "no-such", "--reports", str(tmp_path)))
    assert "frontend 'no-such': unknown protocol" in line


def test_a_missing_or_empty_scenario_folder_is_exit_2_never_a_pass(tmp_path: Path) -> None:
    line = one_line(conformance("--scenarios", str(tmp_path / "nowhere"), "--reports", str(tmp_path)))
    assert line == f"conformance run: --scenarios {tmp_path / 'nowhere'}: the folder does not exist"
    (tmp_path / "empty").mkdir()
    line = one_line(conformance("--scenarios", str(tmp_path / "empty"), "--reports", str(tmp_path)))
    assert "holds no scenario" in line


def test_missing_cassette_is_a_harness_error_naming_it_and_how_to_record_it(tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    shutil.copytree(REPO / "cassettes" / "openai", cassettes / "openai")
    (cassettes / "openai" / "text-basic.stream.yaml").unlink()
    result = conformance(  # only this folder: the packaged cassettes hold the one it lacks
        "--no-packaged", "--scenarios", str(REPO / "scenarios"),
        "--cassettes", str(cassettes), "--reports", str(tmp_path / "reports"), "--run-id", "r",
        "--scenario", "text-basic", "--frontend", "openai", "--backend", "openai",
    )  # fmt: skip
    line = one_line(result)
    assert "text-basic[openai->openai,stream]" in line
    assert "missing cassette" in line and "text-basic.stream.yaml" in line
    assert "conformance record --backend openai --scenario text-basic" in line
    summary = json.loads((tmp_path / "reports" / "r" / "summary.json").read_text())
    assert summary["exit_code"] == 2 and summary["counts"]["harness_error"] == 1
    assert summary["harness_errors"] == ["text-basic[openai->openai,stream]"]
    assert {c["case_id"]: c["verdict"] for c in summary["cases"]}["text-basic[openai->openai,nonstream]"] == "pass"
    junit = (tmp_path / "reports" / "r" / "junit.xml").read_text()
    assert 'errors="1"' in junit and '<error message="harness_error: ' in junit


def test_unreadable_cassette_is_a_harness_error_naming_it(tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    shutil.copytree(REPO / "cassettes" / "openai", cassettes / "openai")
    (cassettes / "openai" / "text-basic.nonstream.yaml").write_text("interactions: [unclosed\n", encoding="utf-8")
    result = conformance(
        "--no-packaged", "--scenarios", str(REPO / "scenarios"),
        "--cassettes", str(cassettes), "--reports", str(tmp_path / "reports"),
        "--scenario", "text-basic", "--frontend", "openai", "--backend", "openai", "--streaming", "nonstream",
    )  # fmt: skip
    line = one_line(result)
    assert "unreadable cassette" in line and "text-basic.nonstream.yaml" in line
    assert "conformance record --backend openai --scenario text-basic" in line


def test_unreachable_sut_fails_in_seconds_before_the_first_case(tmp_path: Path) -> None:
    dead = _free_port()
    result = conformance("--sut", f"http://127.0.0.1:{dead}", "--replay-port", "0", "--reports", str(tmp_path))
    line = one_line(result)
    assert f"cannot reach the system under test at http://127.0.0.1:{dead}" in line
    assert "Connection refused" in line
    assert not any(tmp_path.iterdir()), "no report is started when nothing answers"


@contextmanager
def listening() -> Iterator[int]:
    """A port another process holds (a listening socket)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        yield int(holder.getsockname()[1])


def test_taken_replay_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with listening() as sut, listening() as taken:
        # The port is checked first (instantly), before the system under test is asked anything.
        result = conformance(
            "--sut", f"http://127.0.0.1:{sut}", "--replay-port", str(taken), "--reports", str(tmp_path)
        )
    line = one_line(result)
    assert f"cannot listen on 127.0.0.1:{taken} for the replay server" in line


def _sut_config(tmp_path: Path, replay_port: int) -> Path:
    config = tmp_path / "sut.toml"
    args = ["sut-config", "--scenarios", str(REPO / "scenarios"), "--replay-url", f"http://127.0.0.1:{replay_port}"]
    assert main([*args, "--scenario", "text-basic", "--backend", "openai", "-o", str(config)]) == 0
    return config


def test_taken_replay_port_with_a_live_sut_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with listening() as taken, serve(_sut_config(tmp_path, taken), _free_port()) as url:
        result = conformance("--sut", url, "--replay-port", str(taken), "--reports", str(tmp_path / "reports"))
    line = one_line(result)
    assert f"cannot listen on 127.0.0.1:{taken} for the replay server" in line and "--replay-port" in line


def test_sut_pointed_at_a_dead_replay_port_is_a_harness_error_not_a_proxy_bug(tmp_path: Path) -> None:
    wrong, right = _free_port(), _free_port()
    with serve(_sut_config(tmp_path, wrong), _free_port()) as url:
        result = conformance(
            "--sut", url, "--replay-port", str(right), "--reports", str(tmp_path / "reports"), "--run-id", "r",
            "--scenario", "text-basic", "--frontend", "openai", "--backend", "openai",
        )  # fmt: skip
    line = one_line(result)
    assert "no translated run reached the openai backend" in line
    assert f"nothing reached http://127.0.0.1:{right}/openai" in line and "check its upstream base URL" in line
    summary = json.loads((tmp_path / "reports" / "r" / "summary.json").read_text())
    assert {c["verdict"] for c in summary["cases"]} == {"harness_error"}


def test_sut_answered_by_another_replay_server_never_passes(tmp_path: Path) -> None:
    """The scout's false pass: the gateway's upstream points at another replay server, which answers correctly;
    before, every case passed ("all three runs agree") with nothing at this run's replay server."""
    other, right = _free_port(), _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "harness", "replay-server", "--port", str(other), "--cassettes", "cassettes"]
    replay = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with serve(_sut_config(tmp_path, other), _free_port()) as url:
            _wait_listening(other)
            result = conformance(
                "--sut", url, "--replay-port", str(right), "--reports", str(tmp_path / "reports"), "--run-id", "r",
                "--scenario", "text-basic", "--frontend", "openai", "--backend", "openai",
            )  # fmt: skip
    finally:
        replay.terminate()
        replay.wait(10)
    line = one_line(result)
    assert "answered HTTP 200" in line and "another server answered in the replay server's place" in line
    summary = json.loads((tmp_path / "reports" / "r" / "summary.json").read_text())
    assert {c["verdict"] for c in summary["cases"]} == {"harness_error"}


def _wait_listening(port: int, seconds: float = 30.0) -> None:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port} after {seconds} s")
