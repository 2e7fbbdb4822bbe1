"""The worker processes' fork server: started once, with the engine and every SDK imported
(`harness.runner.preload`, about three seconds of CPU), so that each worker starts warm. Its preload is the longest
wait before the first worker runs, so it starts as soon as a run knows it will use workers: `conformance run` starts
it before its own imports, which then overlap the server's. This module imports nothing of the harness for that."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from typing import Any

PRELOAD = "harness.runner.preload"


def default_jobs() -> int:
    """Worker processes by default: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity on this platform (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def context() -> Any:
    """The process start method: the fork server where the platform has one, else spawn."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload([PRELOAD])
        return ctx
    return multiprocessing.get_context("spawn")


def _server() -> Any:
    from multiprocessing import forkserver

    return getattr(forkserver, "_forkserver", None)


def warm_up(ctx: Any | None = None) -> bool:
    """Start the fork server of `ctx` (default: `context()`'s) now, so that its preload runs while the caller goes
    on; no-op where workers are spawned, or when it runs already. Whether this call started it."""
    ctx = context() if ctx is None else ctx
    if ctx.get_start_method() != "forkserver":
        return False
    from multiprocessing import forkserver

    before = getattr(_server(), "_forkserver_pid", None)
    forkserver.ensure_running()
    return getattr(_server(), "_forkserver_pid", None) != before


def stop() -> None:
    """Kill the fork server this process started (by its pid) and forget it. A closed pipe, the stdlib's way to stop
    it, is read only by a server that finished its preload: one still importing (or hung there) would go on."""
    server = _server()
    pid = getattr(server, "_forkserver_pid", None)
    if server is None or pid is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    server._stop()  # closes its pipe, reaps it, removes its socket, so that a later start begins a new one
