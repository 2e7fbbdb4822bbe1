"""`--pace MS`: the replay server sends a recorded stream's chunks MS milliseconds apart, measured at a real HTTP
client; 0 sends them back to back, as recorded."""

from __future__ import annotations

import asyncio
import itertools
import time
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest

from harness.backends import app as wire
from harness.backends.app import check_pace
from harness.protocols import registry
from harness.proxy import ServerThread
from harness.record import Replayer, create_replay_app
from harness.scenarios.loader import load_scenarios
from tests.conftest import REPO

PACE_MS = 40.0


def _stream(pace: float) -> tuple[list[bytes], list[float], list[bytes]]:
    """The raw reads of the recorded text-basic stream from OpenAI, each read's arrival time, and the recording's
    own chunks."""
    scenarios = load_scenarios(REPO / "scenarios")
    replayer = Replayer(REPO / "cassettes", scenarios)
    scenario = next(s for s in scenarios if s.id == "text-basic")
    codec = registry.get("openai")
    request = codec.encode_request(scenario.request_for("text-basic", stream=True))
    recorded = replayer.reply("openai", request).chunks
    app = create_replay_app(replayer, ["openai"], pace=pace)
    reads: list[bytes] = []
    arrivals: list[float] = []
    with (
        ServerThread(app) as server,
        httpx2.Client(base_url=server.url, timeout=10) as client,
        client.stream("POST", f"/openai{request.path}", content=request.body, headers=request.headers) as r,
    ):
        assert r.status_code == 200
        for chunk in r.iter_raw():
            arrivals.append(time.monotonic())
            reads.append(chunk)
    return reads, arrivals, list(recorded)


def test_paced_chunks_arrive_at_least_the_pace_apart_each_as_recorded() -> None:
    reads, arrivals, recorded = _stream(check_pace(PACE_MS))
    assert len(recorded) >= 3  # a stream worth pacing
    assert reads == recorded  # one read per recorded chunk: the pause keeps each boundary at the client
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    assert min(gaps) >= 0.8 * PACE_MS / 1000  # a sleep never ends early; the margin is the clock's resolution


@pytest.mark.parametrize("pace", [0.0, PACE_MS])
def test_pace_sleeps_between_chunks_only_and_zero_never(pace: float, monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(seconds: float) -> Any:
        slept.append(seconds)
        return await real_sleep(seconds)

    monkeypatch.setattr(wire, "asyncio", SimpleNamespace(sleep=sleep))
    reads, _, recorded = _stream(check_pace(pace))
    assert b"".join(reads) == b"".join(recorded)
    assert slept == ([] if pace == 0 else [pace / 1000] * (len(recorded) - 1))  # none before the first chunk


@pytest.mark.parametrize("ms", [-1.0, 200.5, float("nan"), float("inf")])
def test_pace_out_of_range_is_refused(ms: float) -> None:
    with pytest.raises(ValueError, match=r"--pace .*from 0 to 200"):
        check_pace(ms)


def test_pace_bounds_are_accepted() -> None:
    assert check_pace(0) == 0.0
    assert check_pace(200) == pytest.approx(0.2)
