"""`sut-config --format json`: each backend's single upstream and request paths, each route's upstream URLs, and
the mode it documents with one gateway per upstream, gated for real: a `conformance serve` configured by a script
from the JSON alone (one upstream, model names passed on unchanged) passes the gate."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.gateways.endpoints import endpoint_table
from harness.rig import PLANTED_KEY_ENV
from harness.runner.plan import default_backends
from tests.conftest import REPO
from tests.faults.test_sut import PLANTED, _free_port, serve

SCENARIOS = "text-basic,tool-call-single,system-prompt"


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:  # type: ignore[type-arg]
    assert main(["sut-config", "--format", "json", *args]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_every_route_names_its_full_upstream_urls(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json(capsys, "--backend", "openai,gemini,groq", "--scenario", "text-basic", "--replay-url", "http://r:1/")
    assert doc["replay_url"] == "http://r:1" and doc["upstream_key_env"] == PLANTED_KEY_ENV
    gemini = doc["backends"]["gemini"]
    assert gemini["single_upstream"] == "http://r:1/gemini"
    assert gemini["paths"] == {
        "nonstream": "/v1beta/models/{model}:generateContent",
        "stream": "/v1beta/models/{model}:streamGenerateContent?alt=sse",
    }
    assert doc["backends"]["groq"]["paths"]["stream"] == "/openai/v1/chat/completions"
    route = next(r for r in doc["routes"] if r["model"] == "text-basic--gemini--translate")
    assert route["upstream_base"] == "http://r:1/gemini/_s/text-basic"
    assert route["urls"]["stream"] == (
        "http://r:1/gemini/_s/text-basic/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert {r["backend"] for r in doc["routes"]} == {"openai", "gemini", "groq"}


def test_one_gateway_per_upstream_configured_from_the_json_passes_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PLANTED_KEY_ENV, PLANTED)
    replay_port, sut_port = _free_port(), _free_port()
    replay = f"http://127.0.0.1:{replay_port}"
    doc = _json(capsys, "--backend", "openai", "--scenario", SCENARIOS, "--replay-url", replay)
    upstream = doc["backends"]["openai"]["single_upstream"]
    lines = []
    for route in doc["routes"]:  # one upstream; the model name goes on unchanged and names the scenario
        lines += [f'[models."{route["model"]}"]', 'mode = "translate"', 'protocol = "openai"']
        lines += [f'base_url = "{upstream}"', f'api_key_env = "{doc["upstream_key_env"]}"']
        lines += [f'upstream_model = "{route["model"]}"', ""]
    config = tmp_path / "one-upstream.toml"
    config.write_text("\n".join(lines), encoding="utf-8")
    with serve(config, sut_port) as url:
        args = ["run", "--sut", url, "--replay-port", str(replay_port), "--backend", "openai", "-j", "1", "-q"]
        args += ["--frontend", "openai,anthropic", "--scenario", SCENARIOS, "--reports", str(tmp_path), "--run-id", "x"]
        code = main(args)
    summary = json.loads((tmp_path / "x" / "summary.json").read_text(encoding="utf-8"))
    assert code == 0 and summary["total"] == 3 * 2 * 2
    assert {k: v for k, v in summary["counts"].items() if v} == {"pass": 12}


def test_the_docs_endpoint_table_is_current() -> None:
    text = (REPO / "docs" / "external-gateway.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- endpoint-table:begin[^>]*-->\n(.*?)\n<!-- endpoint-table:end -->", text, re.S)
    assert match is not None
    backends = default_backends(REPO / "cassettes")
    hint = "regenerate: conformance sut-config --endpoint-table"
    assert match.group(1) == endpoint_table(backends).rstrip("\n"), hint
