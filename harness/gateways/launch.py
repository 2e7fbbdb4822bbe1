"""A gateway under test as a child process: started with its own environment and log file, waited for until its
readiness URL answers (bounded), stopped by its PID (SIGTERM, then SIGKILL after a bounded wait) whatever
happened in between.

The process is the gateway's own server in the foreground (`litellm`, `node .../start-server.js`, `ccr start`),
so its PID is the server's: nothing is found or killed by name. It runs in its own process group (stopped as a
group, so whatever it started goes too) and, on Linux, with a parent-death signal: if this process dies in any
way, SIGKILL included, the kernel sends the gateway SIGTERM, so no gateway outlives its run holding its port.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import httpx2

POLL_SECONDS = 0.25
"""Pause between two readiness probes."""
STOP_SECONDS = 10.0
"""How long a gateway may take to exit after SIGTERM before it is killed."""
LOG_TAIL = 2_000
"""Characters of the gateway's log quoted when it fails to start."""


_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:  # pragma: no cover - runs in the child between fork and exec
    """In the child before exec: ask the kernel for SIGTERM when the parent dies (Linux `prctl`); a parent that
    died before the request was made is checked for right after it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


class GatewayStartError(RuntimeError):
    """The gateway exited or never became ready; the message quotes the end of its log."""


@dataclass(frozen=True)
class Launch:
    """How to start one gateway and know it is ready."""

    argv: Sequence[str]
    """The command line (the gateway's server in the foreground)."""
    ready_url: str
    """A GET that answers 200 once the gateway serves requests."""
    log: Path
    """Where its standard output and error go."""
    cwd: Path | None = None
    """Working directory (None: this process's)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables added to this process's environment."""
    ready_seconds: float = 120.0
    """How long it may take to become ready."""


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the kernel's choice), for a server started next."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def log_tail(path: Path, size: int = LOG_TAIL) -> str:
    """The end of a log file ("" when there is none)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text[-size:]


def port_taken(url: str) -> bool:
    """Whether something already listens on the host and port of `url` (a gateway started there would fail to bind,
    and its readiness probe would be answered by the other server)."""
    parts = urlsplit(url)
    with socket.socket() as s:
        s.settimeout(2.0)
        return s.connect_ex((parts.hostname or "127.0.0.1", parts.port or 80)) == 0


class GatewayProcess:
    """One started gateway: `start` (returns once ready), `stop` (by PID, bounded); a context manager too."""

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """The gateway's PID (None before start)."""
        return self.proc.pid if self.proc is not None else None

    def start(self) -> GatewayProcess:
        """Start the process and wait until its readiness URL answers 200; on failure stop it and raise
        GatewayStartError with the end of its log."""
        launch = self.launch
        if port_taken(launch.ready_url):
            raise GatewayStartError(f"{launch.ready_url}: the port is taken by another process; pick a free --port")
        launch.log.parent.mkdir(parents=True, exist_ok=True)
        with launch.log.open("wb") as sink:
            try:
                self.proc = subprocess.Popen(
                    list(launch.argv),
                    cwd=launch.cwd,
                    env={**os.environ, **launch.env},
                    stdin=subprocess.DEVNULL,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: Ctrl-C goes to us, we stop it
                    preexec_fn=partial(_die_with_parent, os.getpid()) if sys.platform == "linux" else None,
                )
            except OSError as exc:
                raise GatewayStartError(f"cannot start {launch.argv[0]}: {exc}") from exc
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        assert self.proc is not None
        launch = self.launch
        deadline = time.monotonic() + launch.ready_seconds
        last = "no answer yet"
        with httpx2.Client(timeout=2.0) as client:
            while True:
                code = self.proc.poll()
                if code is not None:
                    raise GatewayStartError(
                        f"{launch.argv[0]} exited with {code} before it was ready; log {launch.log}:\n"
                        f"{log_tail(launch.log)}"
                    )
                try:
                    response = client.get(launch.ready_url)
                    if response.status_code == 200:
                        return
                    last = f"HTTP {response.status_code}"
                except httpx2.HTTPError as exc:
                    last = f"{type(exc).__name__}: {exc}"
                if time.monotonic() > deadline:
                    raise GatewayStartError(
                        f"{launch.argv[0]} not ready at {launch.ready_url} after {launch.ready_seconds:.0f} s "
                        f"({last}); log {launch.log}:\n{log_tail(launch.log)}"
                    )
                time.sleep(POLL_SECONDS)

    def stop(self, timeout: float = STOP_SECONDS) -> int | None:
        """Stop the process group the gateway leads (its PID is the group's id): SIGTERM, then SIGKILL after
        `timeout` seconds; the gateway's exit code (None if it was never started)."""
        proc = self.proc
        if proc is None:
            return None
        if proc.poll() is None:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait(timeout)
        _signal_group(proc.pid, signal.SIGKILL)  # what the gateway started and left behind in its group
        return proc.returncode

    def __enter__(self) -> GatewayProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    """Send `sig` to the process group `pgid` (ours alone: the gateway was started in a new session)."""
    with suppress(ProcessLookupError):  # the group is empty: nothing left to stop
        os.killpg(pgid, sig)


@contextmanager
def running(launch: Launch) -> Iterator[GatewayProcess]:
    """The gateway started and ready for the block, stopped by PID after it (also on failure)."""
    process = GatewayProcess(launch)
    process.start()
    try:
        yield process
    finally:
        process.stop()
