"""The SDK-and-proxy floor of `bench_matrix`: the SDK floor's calls (`bench/_floor.py`) made through the built-in
proxy as a matrix run serves it (`harness.rig.Environment`: in process, the run's own route, the backend's
recording replayed upstream, the tap filing each exchange), and nothing else of the harness: no checks, no judge,
no trace, no secret scan. The harness over this floor is what the harness adds around the system under test; this
floor over the SDK floor is what the built-in proxy (the system under test of the main job) costs."""

from __future__ import annotations

from dataclasses import dataclass

from bench._floor import Floor, FloorCall, answered
from bench._socket_floor import TURN_TIMEOUT_S
from harness import drivers
from harness.drivers.base import SdkResult, SocketDriver
from harness.rig import Environment
from harness.runner.engine import CaseRunner, Engine


@dataclass
class ProxyFloor:
    """The SDK calls through the built-in proxy, with the environment they go through; `close` when done."""

    cases: CaseRunner
    """The runner whose environment the calls go through (built as a matrix run builds it)."""
    calls: list[FloorCall]
    """The SDK floor's calls: each one's run and request (its recorded reply is not used here)."""

    @property
    def env(self) -> Environment:
        """The proxy wired to the replayed backends."""
        return self.cases.env

    def run_one(self, call: FloorCall) -> SdkResult:
        """One SDK call through the proxy (the run's transport: HTTP, or a WebSocket-mode turn)."""
        driver = drivers.get(call.run.client)
        with self.env.session(call.run) as session:
            if call.request is None:
                return driver.list_models(base_url=session.base_url, http_client=session.http)
            if call.run.transport == "ws":
                if not isinstance(driver, SocketDriver):
                    raise SystemExit(f"proxy floor: {call.run.client} makes no WebSocket-mode call")
                turn = driver.run_socket(
                    call.request, base_url=session.base_url, headers=session.headers, timeout=TURN_TIMEOUT_S
                )
                return turn.result
            return driver.run(call.request, stream=call.run.stream, base_url=session.base_url, http_client=session.http)

    def run(self) -> int:
        """Every call, one after the other; the number of calls answered."""
        return len([r for r in (self.run_one(call) for call in self.calls) if answered(r)])

    def close(self) -> None:
        """Stop the environment's loop and servers."""
        self.cases.close()


def prepare_proxy_floor(runner: Engine, floor: Floor) -> ProxyFloor:
    """The SDK floor's calls (the runner's planned runs its SDKs can send), to be made through the built-in proxy
    of an environment like the runner's."""
    return ProxyFloor(runner.case_runner(), floor.calls)
