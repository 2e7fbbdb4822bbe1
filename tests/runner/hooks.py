"""Translate hooks that pickle (module-level functions), so that they reach worker processes: a broken adapter,
and the ways a worker can be lost (a crash, a hang) on the translated runs of one scenario; and a stand-in worker
life for `WorkerPool` (`waits_for_a_stopped_worker`)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from harness import ir

STRUCK = "tool-call-parallel"
"""Scenario whose translated runs a crashing or hanging hook strikes."""
STRUCK_PROMPT = "Compare the weather in Paris and Tokyo."
"""Its one user turn (the upstream model is the backend's realistic model, so the prompt names the scenario)."""


def _struck(request: ir.Request) -> bool:
    if len(request.messages) != 1:
        return False
    parts = request.messages[0].content
    return bool(parts) and getattr(parts[0], "text", None) == STRUCK_PROMPT


def drop_second_block(event: ir.StreamEvent) -> tuple[ir.StreamEvent, ...]:
    """Loses every event of content block 1 (the second parallel tool call)."""
    return () if getattr(event, "index", None) == 1 else (event,)


def crash(request: ir.Request) -> ir.Request:
    """Kills the process running the proxy (as a segfault in a C extension would) on the struck scenario."""
    if _struck(request):
        os._exit(3)
    return request


def hang(request: ir.Request) -> ir.Request:
    """Blocks the process running the proxy for an hour (a deadlock) on the struck scenario."""
    if _struck(request):
        time.sleep(3600)
    return request


STOPPED_WAIT_S = 30.0
"""How long task 0 of `waits_for_a_stopped_worker` waits for another worker to be told to stop."""


def waits_for_a_stopped_worker(link: Any, folder: Path) -> None:
    """A worker life for `WorkerPool` (its config is a folder): it marks in `folder` that it was told to stop; task 0
    ends only once some worker has been (bounded by STOPPED_WAIT_S), and says whether one was, in its parts."""
    from harness.runner.workers import Done

    link.conn.send(("ready", None))
    while True:
        task = link.conn.recv()
        if task is None:
            (folder / f"stopped-{os.getpid()}").touch()
            return
        seen = True
        if task.number == 0:
            deadline = time.monotonic() + STOPPED_WAIT_S
            while not (seen := any(folder.glob("stopped-*"))) and time.monotonic() < deadline:
                time.sleep(0.01)
        link.conn.send(("done", Done(task.number, parts={"another_stopped": str(seen)})))
