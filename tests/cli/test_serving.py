"""One line and exit 2 for a port that cannot be served (in use, out of range) by `serve`, `replay-server` and
`mock-server`; Ctrl-C on a real `conformance` process prints one line, exits 130 and leaves no child behind."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli import main
from tests.conftest import REPO


@pytest.fixture
def busy_port() -> object:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        yield holder.getsockname()[1]


def _proxy_config(tmp_path: Path) -> Path:
    config = tmp_path / "proxy.toml"
    assert main(["sut-config", "--scenarios", str(REPO / "scenarios"), "--backend", "openai", "-o", str(config)]) == 0
    return config


@pytest.mark.parametrize("command", ["serve", "replay-server", "mock-server"])
def test_port_in_use_exits_2_with_one_line(
    command: str, busy_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = {
        "serve": ["--config", str(_proxy_config(tmp_path))],
        "replay-server": ["--cassettes", str(REPO / "cassettes"), "--scenarios", str(REPO / "scenarios")],
        "mock-server": ["--scenarios", str(REPO / "scenarios")],
    }[command]
    capsys.readouterr()
    assert main([command, *extra, "--port", str(busy_port)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"conformance {command}: cannot listen on 127.0.0.1:{busy_port}: Address already in use"
    assert not any("Traceback" in line for line in err)


@pytest.mark.parametrize("command", ["serve", "replay-server", "mock-server"])
@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_out_of_range_port_is_a_usage_error(command: str, port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([command, "--config", "x.toml", "--port", port] if command == "serve" else [command, "--port", port])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "--port" in err and "Traceback" not in err


def _group_gone(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


def test_ctrl_c_prints_one_line_exits_130_and_leaves_no_process(tmp_path: Path) -> None:
    # A real run with worker processes, in its own process group (as a terminal's foreground job): Ctrl-C is
    # SIGINT to the whole group.
    code = "from harness.cli import main; import sys; sys.exit(main())"
    args = ["run", "--backend", "openai,anthropic,gemini", "-j", "2", "--reports", str(tmp_path / "r")]
    process = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=REPO,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert process.stderr is not None
        assert process.stderr.readline().startswith(b"running ")
        time.sleep(2.0)
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=60)
        gone = _group_gone(process.pid, 20)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    lines = err.decode().strip().splitlines()
    assert process.returncode == 130, lines[-5:]
    assert lines[-1] == "conformance run: interrupted"
    assert not any("Traceback" in line for line in lines)
    assert gone, "processes of the run's group outlived it"


def test_list_into_a_closed_pipe_ends_without_a_traceback() -> None:
    # `conformance list ... | head`: the reader leaves early (here before the first write); that is not an error.
    code = "from harness.cli import main; import sys; sys.exit(main())"
    pipeline = f"{sys.executable} -c '{code}' list scenarios | true"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", pipeline], cwd=REPO, capture_output=True, timeout=120)
    assert b"Traceback" not in done.stderr and b"BrokenPipe" not in done.stderr, done.stderr[-500:]
    assert done.returncode == 0


@pytest.mark.parametrize("command", ["run", "selftest", "fuzz", "gateway"])
def test_reports_that_is_a_file_is_a_usage_error(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 22: `--reports FILE` ended a run in a NotADirectoryError traceback.
    file = tmp_path / "afile"
    file.write_text("x")
    with pytest.raises(SystemExit) as stopped:
        main([command, "--reports", str(file / "below")])
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith(f"argument --reports: {file / 'below'}: not a folder ({file} is a file)")


def test_ctrl_c_while_the_fork_server_imports_the_sdks_is_ignored_there() -> None:
    # Under load the fork server's imports outlast the first seconds of a run, and the stdlib fork server ignores
    # SIGINT only after them: a Ctrl-C then ended it in a KeyboardInterrupt traceback after the parent's line.
    code = (
        "import importlib.abc, os, signal, sys\n"
        "class Kick(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'harness.drivers':\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "sys.meta_path.insert(0, Kick())\n"
        "import harness.runner.preload\n"
        "print('preloaded')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, timeout=120)
    assert b"KeyboardInterrupt" not in done.stderr, done.stderr[-500:]
    assert done.returncode == 0 and done.stdout == b"preloaded\n"
