"""Stored-response chains in the matrix: which cases exist, the built-in proxy's declared refusal, and a real proxy
that refuses the chain cleanly, run as the system under test, ending `unsupported` with its own words."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2

from harness.plumbing.environment import proxy_config
from harness.plumbing.keys import planted_key
from harness.proxy import ServerThread, TranslateHooks, create_app
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions, plan
from harness.scenarios import load_scenarios
from harness.trace.model import Verdict
from tests.conftest import REPO

CHAIN = "previous-response-chain"


def _options(tmp_path: Path, **changes: object) -> MatrixOptions:
    base: dict[str, object] = {
        "scenarios": REPO / "scenarios",
        "cassettes": REPO / "cassettes",
        "reports": tmp_path / "reports",
        "frontends": ["openai", "anthropic", "responses"],
        "backends": ["anthropic", "responses"],
        "only": [CHAIN],
        "known": tmp_path / "known.toml",
        "run_id": "t",
    }
    return MatrixOptions(**{**base, **changes})  # type: ignore[arg-type]


def test_only_the_frontend_that_chains_has_cases_and_the_builtin_proxy_declares_its_refusal(tmp_path: Path) -> None:
    planned = plan(_options(tmp_path))
    assert {c.frontend for c in planned.cases} == {"responses"}
    gaps = {(c.backend, c.stream): planned.gaps[c] for c in planned.cases}
    assert gaps[("responses", True)] is None and gaps[("responses", False)] is None
    assert "the built-in proxy keeps no server state over HTTP" in (gaps[("anthropic", True)] or "")
    # Against an external proxy every case is judged.
    external = plan(_options(tmp_path, sut="http://127.0.0.1:9"))
    assert all(gap is None for gap in external.gaps.values())


def test_the_builtin_proxy_chains_before_a_backend_that_stores_responses(tmp_path: Path) -> None:
    engine = Engine(_options(tmp_path, frontends=["responses"], backends=["responses"]))
    assert engine.run().exit_code == 0
    for case in engine.results:
        assert case.verdict is Verdict.PASS, case.reason
        checks = {c.name: c.passed for c in case.runs["translated"].checks}
        assert checks["chain.unknown_id_refused"] is True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_proxy_that_refuses_the_continuation_with_an_error_envelope_is_unsupported_in_its_words(
    tmp_path: Path,
) -> None:
    # The built-in proxy as an external system under test: it refuses the id no server issued and the continuation
    # (400, "cannot translate the request ... relies on state"), and answers the first call.
    planted_key()
    replay_port = _free_port()
    scenarios = [s for s in load_scenarios(REPO / "scenarios") if s.id == CHAIN]
    config = proxy_config(scenarios, ["anthropic", "responses"], f"http://127.0.0.1:{replay_port}")
    with ServerThread(create_app(config, hooks={"translate": TranslateHooks()})) as server:
        options = _options(
            tmp_path,
            frontends=["responses"],
            backends=["anthropic", "responses"],
            sut=server.url,
            replay_port=replay_port,
        )
        engine = Engine(options)
        code = engine.run().exit_code
    assert code == 0, [(r.case_id, r.verdict, r.reason) for r in engine.results]
    verdicts = {(case.backend, case.stream): case for case in engine.results}
    for stream in (True, False):
        refused = verdicts[("anthropic", stream)]
        assert refused.verdict is Verdict.UNSUPPORTED, refused.reason
        assert "refuses the stored-response chain: HTTP 400" in refused.reason
        assert "relies on state" in refused.reason
        # Before a backend that stores responses it sends the continuation on, and the chain is judged.
        assert verdicts[("responses", stream)].verdict is Verdict.PASS, verdicts[("responses", stream)].reason


class _Forgetful(BaseHTTPRequestHandler):
    """A gateway that forgets: it drops `previous_response_id` and sends the rest on to `target` (the built-in
    proxy), so the new input goes upstream alone and an id no server issued is answered."""

    target = ""
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        body.pop("previous_response_id", None)
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
        headers.update({k: v for k, v in self.headers.items() if k.lower().startswith("x-conformance")})
        with httpx2.Client(timeout=10) as client:
            answer = client.post(self.target + self.path, json=body, headers=headers)
        self.send_response(answer.status_code)
        self.send_header("content-type", answer.headers.get("content-type", "application/json"))
        self.send_header("content-length", str(len(answer.content)))
        self.end_headers()
        self.wfile.write(answer.content)

    def log_message(self, *args: object) -> None:
        pass


def test_a_gateway_that_drops_the_conversation_and_answers_an_unknown_id_is_a_proxy_bug(tmp_path: Path) -> None:
    planted_key()
    replay_port = _free_port()
    scenarios = [s for s in load_scenarios(REPO / "scenarios") if s.id == CHAIN]
    config = proxy_config(scenarios, ["anthropic"], f"http://127.0.0.1:{replay_port}")
    with ServerThread(create_app(config, hooks={"translate": TranslateHooks()})) as proxy:
        handler = type("Handler", (_Forgetful,), {"target": proxy.url})
        gateway = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=gateway.serve_forever, daemon=True)
        thread.start()
        try:
            url = f"http://127.0.0.1:{gateway.server_address[1]}"
            options = _options(
                tmp_path, frontends=["responses"], backends=["anthropic"], sut=url, replay_port=replay_port
            )
            engine = Engine(options)
            code = engine.run().exit_code
        finally:
            gateway.shutdown()
            gateway.server_close()
            thread.join(10)
    assert code == 1
    for case in engine.results:
        assert case.verdict is Verdict.PROXY_BUG_REQUEST, case.reason
        assert case.request_divergences[0].path.startswith("request.messages"), case.request_divergences
        failed = {c.name: c.actual for c in case.runs["translated"].checks if not c.passed}
        assert failed["chain.history_upstream"]["missing"] == [
            "user: My name is Ada. Remember it.",
            "assistant: Nice to meet you, Ada. I will remember.",
        ]
        assert str(failed["chain.unknown_id_refused"]).startswith("answered (response resp_")
        # What the replay server received for the last call is the new input alone.
        upstream = case.runs["translated"].upstream_request
        assert upstream is not None and len(upstream.messages) == 1
