"""Wire deviations end to end: a proxy whose OpenAI usage chunk carries a non-standard field gets a warning naming
the rule, listed per case in the result, summary.json and JUnit; the gate fails on it only under `strict`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from harness.proxy import TranslateHooks
from harness.report import file_writers
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions
from tests.conftest import REPO


def _cost(data: bytes) -> bytes:
    # LiteLLM adds `cost` to the usage it reports.
    return data.replace(b'"usage":{"prompt_tokens"', b'"usage":{"cost":0.0001,"prompt_tokens"')


def options(tmp_path: Path, **kw: object) -> MatrixOptions:
    base = MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        reports=tmp_path / "reports",
        frontends=["openai"],
        backends=["anthropic"],
        only=["text-basic"],
        known=tmp_path / "known.toml",
        run_id="t",
        hooks=TranslateHooks(on_frontend_bytes=_cost),
    )
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def test_a_deviation_is_a_warning_listed_everywhere_and_fails_only_under_strict(tmp_path: Path) -> None:
    opts = options(tmp_path)
    runner = Engine(opts, file_writers(tmp_path / "reports" / "t"))
    finished = runner.run()
    assert finished.exit_code == 0
    by_id = {r.case_id: r for r in runner.results}
    stream = by_id["text-basic[openai->anthropic,stream]"]
    assert stream.verdict == "pass"
    assert [(d.rule, d.message) for d in stream.deviations] == [
        ("openai.documented_fields", f"chunk {n} usage has cost") for n in _usage_chunks(stream)
    ]
    assert "platform.openai.com" in stream.deviations[0].source
    assert finished.deviating == [c for c, r in by_id.items() if r.deviations]
    summary = json.loads((tmp_path / "reports" / "t" / "summary.json").read_text())
    listed = {c["case_id"]: c["deviations"] for c in summary["cases"]}
    assert listed[stream.case_id][0]["rule"] == "openai.documented_fields"
    assert summary["deviating"] == finished.deviating and summary["strict"] is False
    junit = (tmp_path / "reports" / "t" / "junit.xml").read_text()
    assert '<property name="wire_deviation" value="openai.documented_fields: chunk' in junit
    assert "wire deviation (warning): openai.documented_fields" in junit and "<failure" not in junit

    strict = options(tmp_path, strict=True, run_id="s")
    finished = Engine(strict, file_writers(tmp_path / "reports" / "s")).run()
    assert finished.exit_code == 1 and finished.new_proxy_bugs == []
    junit = (tmp_path / "reports" / "s" / "junit.xml").read_text()
    assert '<failure message="wire deviation (--strict): openai.documented_fields" type="wire_deviation"' in junit


def _usage_chunks(result: object) -> list[int]:
    frontend = result.runs["translated"].wire.frontend  # type: ignore[attr-defined]
    chunks = [c for c in frontend.split("\n\n") if c.startswith("data: {")]
    return [i for i, c in enumerate(chunks) if '"cost"' in c]


def _provider(data: bytes) -> bytes:
    # MLflow AI Gateway 3.17.2 adds `provider` to every chunk it streams to an OpenAI client.
    return data.replace(b'"object":"chat.completion.chunk"', b'"object":"chat.completion.chunk","provider":"openai"')


def test_mlflow_provider_on_every_chunk_is_one_deviation_naming_the_chunks(tmp_path: Path) -> None:
    """Not a line per chunk: a long stream's case listed hundreds that said one thing (`facts.collapsed`)."""
    engine = Engine(options(tmp_path, hooks=TranslateHooks(on_frontend_bytes=_provider), streams=(True,)))
    engine.run()
    (stream,) = engine.results
    frontend = stream.runs["translated"].wire.frontend  # type: ignore[union-attr]
    chunks = [c for c in frontend.split("\n\n") if c.startswith("data: {")]
    assert len(chunks) > 2 and all('"provider":"openai"' in c for c in chunks)
    assert [(d.rule, d.message) for d in stream.deviations] == [
        ("openai.documented_fields", f"chunks 0-{len(chunks) - 1} (each) has provider")
    ]


def test_the_built_in_proxy_keeps_every_wire_rule(tmp_path: Path) -> None:
    opts = options(
        tmp_path,
        hooks=None,
        frontends=["openai", "gemini"],
        backends=["anthropic", "openai", "gemini"],
        only=["text-basic", "tool-call-parallel", "usage-with-cache", "midstream-error", "truncated-stream"],
    )
    engine = Engine(opts)
    engine.run()
    assert {r.case_id: r.deviations for r in engine.results if r.deviations} == {}
