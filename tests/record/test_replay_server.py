"""The replay server on a loopback socket: provider endpoints answered from cassettes, misses explained."""

from __future__ import annotations

import httpx2

from harness import ir
from harness.protocols import registry
from harness.proxy import ServerThread
from harness.record import Replayer, create_replay_app
from harness.scenarios.loader import load_scenarios
from tests.conftest import REPO


def test_replay_server_serves_each_backend_and_explains_misses() -> None:
    scenarios = load_scenarios(REPO / "scenarios")
    scenario = next(s for s in scenarios if s.id == "text-basic")
    app = create_replay_app(Replayer(REPO / "cassettes", scenarios), ["openai", "gemini"])
    with ServerThread(app) as server, httpx2.Client(base_url=server.url, timeout=10) as client:
        for backend in ("openai", "gemini"):
            codec = registry.get(backend)
            request = codec.encode_request(scenario.request_for("text-basic", stream=True))
            response = client.post(
                f"/{backend}{request.path}", params=request.query, content=request.body, headers=request.headers
            )
            assert response.status_code == 200
            decoder = codec.stream_decoder()
            events = decoder.feed(response.content) + decoder.close()
            assert events[-1].kind == "done"
            assert "".join(e.text for e in events if e.kind == "text_delta")
        odd = registry.get("openai").encode_request(
            scenario.request_for("no-such-scenario", stream=True).model_copy(
                update={"messages": [ir.Message(role="user", content=[ir.TextPart(text="nothing like this")])]}
            )
        )
        miss = client.post(f"/openai{odd.path}", content=odd.body, headers=odd.headers)
        assert miss.status_code == 400
        assert "closest:" in miss.json()["error"]["message"]
