"""Stored-response chains in the matrix: which cases exist, the built-in proxy's declared refusal, and a real proxy
that refuses the chain cleanly, run as the system under test, ending `unsupported` with its own words."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2

from harness.proxy import ServerThread, TranslateHooks, create_app
from harness.rig.environment import proxy_config
from harness.rig.keys import planted_key
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions, plan
from harness.scenarios import load_scenarios
from harness.trace.model import CaseResult, Verdict
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


def test_a_gateway_that_drops_the_conversation_and_answers_an_unknown_id_is_a_proxy_bug(tmp_path: Path) -> None:
    code, results = _through(tmp_path, _Forgetful, CHAIN)
    assert code == 1
    for case in results:
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


class _Plain(BaseHTTPRequestHandler):
    """A gateway that sends every request on to `target` (the built-in proxy) as it came."""

    target = ""
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
        headers.update({k: v for k, v in self.headers.items() if k.lower().startswith("x-conformance")})
        with httpx2.Client(timeout=10) as client:
            answer = client.post(self.target + self.path, content=body, headers=headers)
        self._answer(answer.status_code, answer.headers.get("content-type", "application/json"), answer.content)

    def _answer(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _Forgetful(_Plain):
    """A gateway that forgets: it drops `previous_response_id` and sends the rest on, so the new input goes
    upstream alone and an id no server issued is answered."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        body.pop("previous_response_id", None)
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
        headers.update({k: v for k, v in self.headers.items() if k.lower().startswith("x-conformance")})
        with httpx2.Client(timeout=10) as client:
            answer = client.post(self.target + self.path, json=body, headers=headers)
        self._answer(answer.status_code, answer.headers.get("content-type", "application/json"), answer.content)


class _NoCompaction(_Plain):
    """Sends everything on, but answers compaction itself with `status` and an error envelope."""

    status = 404

    def do_POST(self) -> None:
        if not self.path.endswith("/responses/compact"):
            super().do_POST()
            return
        self.rfile.read(int(self.headers.get("content-length", "0")))
        error = {"error": {"message": "compaction is not supported", "type": "invalid_request_error", "code": None}}
        self._answer(self.status, "application/json", json.dumps(error).encode())


def _through(tmp_path: Path, handler: type[BaseHTTPRequestHandler], scenario: str) -> tuple[int, list[CaseResult]]:
    """The cases of `scenario` (Responses frontend, Anthropic backend) through `handler` before the built-in proxy."""
    planted_key()
    replay_port = _free_port()
    scenarios = [s for s in load_scenarios(REPO / "scenarios") if s.id == scenario]
    config = proxy_config(scenarios, ["anthropic"], f"http://127.0.0.1:{replay_port}")
    with ServerThread(create_app(config, hooks={"translate": TranslateHooks()})) as proxy:
        gateway = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (handler,), {"target": proxy.url}))
        thread = threading.Thread(target=gateway.serve_forever, daemon=True)
        thread.start()
        try:
            url = f"http://127.0.0.1:{gateway.server_address[1]}"
            options = _options(
                tmp_path,
                frontends=["responses"],
                backends=["anthropic"],
                only=[scenario],
                sut=url,
                replay_port=replay_port,
            )
            engine = Engine(options)
            code = engine.run().exit_code
        finally:
            gateway.shutdown()
            gateway.server_close()
            thread.join(10)
    return code, engine.results


def test_the_builtin_proxy_behind_a_gateway_passes_compaction(tmp_path: Path) -> None:
    code, results = _through(tmp_path, _Plain, "compaction-continued")
    assert code == 0, [(r.case_id, r.reason) for r in results]
    for case in results:
        assert case.verdict is Verdict.PASS, case.reason
        checks = {c.name: c.passed for c in case.runs["translated"].checks}
        assert checks["chain.history_upstream"] is True


def test_a_gateway_that_refuses_compaction_with_a_client_error_is_unsupported(tmp_path: Path) -> None:
    code, results = _through(tmp_path, _NoCompaction, "compaction-continued")
    assert code == 2  # nothing else was judged
    for case in results:
        assert case.verdict is Verdict.UNSUPPORTED, case.reason
        assert "refuses compaction: HTTP 404" in case.reason


def test_a_gateway_that_answers_compaction_with_a_server_error_is_judged_not_excused(tmp_path: Path) -> None:
    # LR17: "not supported" sent as a 500, which clients retry. The first call reached the backend, so the run is
    # judged (not a harness error about the upstream's wiring).
    code, results = _through(tmp_path, type("Failing", (_NoCompaction,), {"status": 500}), "compaction-continued")
    assert code == 1
    for case in results:
        assert case.verdict is Verdict.PROXY_BUG_RESPONSE, case.reason
        assert "no_error" in case.reason


def test_compaction_needs_no_server_state_so_the_builtin_proxy_runs_it_before_every_backend(tmp_path: Path) -> None:
    planned = plan(_options(tmp_path, only=["compaction-continued"]))
    assert {c.frontend for c in planned.cases} == {"responses"}
    assert all(planned.gaps[c] is None for c in planned.cases)
