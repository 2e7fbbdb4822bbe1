"""The environment's socket mode: every run's client shares one connection pool, and a run that ends (its client
closed) leaves the pool to the runs still reading from it."""

from __future__ import annotations

import openai

from harness.rig import Environment
from harness.scenarios.loader import load_scenarios, select
from harness.trace import Run
from tests.conftest import REPO


def _stream(env: Environment, run: Run, http: object) -> openai.Stream[object]:
    client = openai.OpenAI(base_url=f"{env.base_url}/v1", api_key="unused", http_client=http, max_retries=0)  # type: ignore[arg-type]
    return client.chat.completions.create(  # type: ignore[call-overload,no-any-return]
        model=run.route, messages=[{"role": "user", "content": "hi"}], stream=True
    )


def test_a_run_that_ends_leaves_the_shared_pool_to_a_run_still_streaming() -> None:
    """Regression: each run's `with session.http:` closed the one transport of socket mode, so under -j the run
    still streaming lost its connection mid-body and was judged a backend issue."""
    scenarios = select(load_scenarios(REPO / "scenarios"), ["long-output", "text-basic"])
    env = Environment(scenarios, ["openai"], REPO / "cassettes", socket=True)
    try:
        slow = Run("baseline_frontend", "openai", "openai", "long-output", True)
        quick = Run("baseline_frontend", "openai", "openai", "text-basic", True)
        with env.session(slow) as reading:
            events = iter(_stream(env, slow, reading.http))
            first = next(events)
            with env.session(quick) as other:
                assert [c for c in _stream(env, quick, other.http)]  # this run ends, its client is closed
            rest = list(events)  # the slow run reads on through the same pool
        assert first is not None and len(rest) > 5
        assert reading.exchange is not None and reading.exchange.frontend_status == 200
        assert other.exchange is not None
    finally:
        env.close()
