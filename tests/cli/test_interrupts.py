"""Ctrl-C and SIGTERM stop a command wherever they land (the hang CI met: an interrupt raised inside one of the
in-process proxy's tasks was caught there, and the run waited out its timeouts instead of stopping)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import pytest

from harness.cli import Terminated, sigterm_raises
from harness.rig.bridge import InlineLoop
from harness.runner import interrupts
from harness.runner.crash import reraise_interrupt


def _send_sigterm_soon(delay: float = 0.2) -> None:
    timer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGTERM))
    timer.daemon = True
    timer.start()


def test_an_interrupt_inside_an_app_task_that_catches_everything_still_stops_the_wait() -> None:
    async def stubborn() -> str:
        try:
            await asyncio.sleep(5)
        except KeyboardInterrupt:  # app code that swallows what lands in it
            await asyncio.sleep(5)
        return "waited it out"

    loop = InlineLoop()
    started = time.monotonic()
    with sigterm_raises(), pytest.raises(Terminated):
        _send_sigterm_soon()
        loop.run(stubborn(), timeout=30)
    assert time.monotonic() - started < 3
    loop.close()


def test_a_wait_after_an_interrupted_one_is_not_stopped_by_its_stale_callback() -> None:
    loop = InlineLoop()

    async def quick() -> int:
        return 7

    with sigterm_raises(), pytest.raises(Terminated):
        _send_sigterm_soon(0.1)
        loop.run(asyncio.sleep(5), timeout=30)
    assert loop.run(quick()) == 7  # run_until_complete would say "Event loop stopped before Future completed"
    loop.close()


class _Finalized:
    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:  # the handler runs here, inside the finalizer, which swallows it
            pass


def test_an_interrupt_swallowed_by_a_finalizer_arrives_again() -> None:
    with sigterm_raises(), pytest.raises(Terminated):
        _Finalized()  # collected at once: its __del__ runs, the Terminated raised in it is ignored there
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            time.sleep(0.01)
    assert time.monotonic() < deadline


def test_an_interrupt_asked_for_and_not_raised_is_raised_at_the_next_run() -> None:
    interrupts.request(Terminated)
    with pytest.raises(Terminated):
        interrupts.raise_pending()
    interrupts.raise_pending()  # raised once


def test_an_interrupt_wrapped_by_an_import_stops_the_run() -> None:
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as inner:
            raise RuntimeError("Error calling __set_name__ on 'cached_property' instance") from inner
    except RuntimeError as wrapped:
        with pytest.raises(KeyboardInterrupt):
            reraise_interrupt(wrapped)
    reraise_interrupt(ValueError("no interrupt in its chain"))
