"""The replay answers as the real provider would for the request it gets: a proxy that streams from OpenAI without
asking for the usage chunk (`stream_options.include_usage`) gets no usage, and its client sees none, so the
gate catches it (claude-code-router's R4/R8 in docs/gateways.md: usage 0 after an unasked OpenAI upstream)."""

from __future__ import annotations

from pathlib import Path

from harness import ir
from harness.proxy import TranslateHooks
from harness.report import file_writers
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions
from tests.conftest import REPO


def _unasked(request: ir.Request) -> ir.Request:
    # What the OpenAI encoder reads for a client's own stream_options (`_shape`): here, none sent.
    fields = {**request.provider_fields, "openai": {"_shape": {"stream_options": None}}}
    return request.model_copy(update={"provider_fields": fields})


def _run(tmp_path: Path, hooks: TranslateHooks | None, run_id: str) -> tuple[int, dict[str, str]]:
    options = MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        reports=tmp_path / "reports",
        frontends=["anthropic"],
        backends=["openai"],
        only=["text-basic"],
        streams=(True,),
        known=tmp_path / "known.toml",
        run_id=run_id,
        hooks=hooks,
    )
    engine = Engine(options, file_writers(tmp_path / "reports" / run_id))
    finished = engine.run()
    return finished.exit_code, {r.case_id: r.verdict for r in engine.results}


def test_a_proxy_that_does_not_ask_openai_for_usage_is_caught(tmp_path: Path) -> None:
    case = "text-basic[anthropic->openai,stream]"
    assert _run(tmp_path, None, "clean") == (0, {case: "pass"})
    code, verdicts = _run(tmp_path, TranslateHooks(on_upstream_request=_unasked), "unasked")
    assert code == 1 and verdicts == {case: "proxy_bug_response"}
