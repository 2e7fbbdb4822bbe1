"""A block the IR has no form for (an Anthropic `server_tool_use`) in the proxy's answer only is the proxy's fault.

claude-code-router 2.0.0 answers every non-streamed OpenAI reply with a `server_tool_use` web search and an empty
`web_search_tool_result` (it tests `message.annotations`, and the `[]` real OpenAI sends is truthy in JS). The
anthropic driver cannot express that answer; calling the whole case unsupported hid the phantom block and every
other bug of the case. A backend that sends such a block itself still makes its case unsupported (its baseline run
cannot be expressed either).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.drivers.base import SdkResult, UnexpressibleAnswer
from harness.faults.wire_edits import edit_sse
from harness.proxy import TranslateHooks
from harness.rig import Session
from harness.runner import execute
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions
from harness.trace import Run
from harness.trace.model import Verdict
from tests.conftest import REPO

SERVER_TOOL = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": ""}}


def _phantom_web_search(name: str | None, data: Any) -> Any:
    if isinstance(data, dict) and data.get("type") == "content_block_start" and data.get("index") == 0:
        return {**data, "content_block": SERVER_TOOL}
    return data


def test_a_server_tool_use_block_only_the_proxy_sent_is_a_proxy_bug_not_unsupported(tmp_path: Path) -> None:
    hooks = TranslateHooks(on_frontend_bytes=lambda chunk: edit_sse(chunk, _phantom_web_search))
    opts = MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        reports=tmp_path / "reports",
        frontends=["anthropic"],
        backends=["openai"],
        only=["text-basic"],
        known=tmp_path / "known.toml",
        run_id="t",
        streams=(True,),
        hooks=hooks,
    )
    engine = Engine(opts)
    finished = engine.run()
    assert finished.exit_code == 1
    (case,) = engine.results
    assert case.verdict is Verdict.PROXY_BUG_RESPONSE
    translated = case.runs["translated"]
    check = next(c for c in translated.checks if c.name == execute.UNEXPRESSIBLE_ANSWER)
    assert not check.passed and check.actual == "anthropic: content block 'server_tool_use' has no IR form"
    assert "openai backend" in str(check.expected)
    assert '"type":"server_tool_use"' in translated.wire.frontend


class _Answers:
    """A driver whose answer holds a block the IR has no form for."""

    name = "anthropic"

    def run(self, request: object, *, stream: bool, base_url: str, http_client: object) -> SdkResult:
        raise UnexpressibleAnswer("anthropic: content block 'server_tool_use' has no IR form")


@pytest.mark.parametrize("role", ["baseline_frontend", "baseline_backend"])
def test_a_server_tool_use_block_the_backend_sent_leaves_the_case_unsupported(role: str) -> None:
    run = Run(role, "anthropic", "anthropic", "text-basic", False)  # type: ignore[arg-type]
    scenario = _scenario()
    with pytest.raises(execute.Unsupported, match="anthropic SDK: anthropic: content block 'server_tool_use'"):
        execute._call(_Answers(), run, scenario, Session("http://127.0.0.1:1", None), 60.0)  # type: ignore[arg-type]


def test_the_translated_run_keeps_the_reason_as_its_outcome() -> None:
    run = Run("translated", "anthropic", "openai", "text-basic", False)
    outcome = execute._call(_Answers(), run, _scenario(), Session("http://127.0.0.1:1", None), 60.0)  # type: ignore[arg-type]
    assert outcome.unexpressible == "anthropic: content block 'server_tool_use' has no IR form"
    assert outcome.result == SdkResult() and outcome.crash is None


def _scenario() -> Any:
    from harness.scenarios.loader import load_scenarios

    return next(s for s in load_scenarios(REPO / "scenarios") if s.id == "text-basic")
