"""docs/external-gateway.md stays true: its scenario table is the one `conformance sut-config --scenario-table`
prints for the scenarios folder, and its config examples are what `sut-config` generates."""

from __future__ import annotations

import re

from harness.gateways import render, scenario_table
from harness.scenarios.loader import load_scenarios
from tests.conftest import REPO

DOC = REPO / "docs" / "external-gateway.md"


def test_scenario_table_is_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"<!-- scenario-table:begin[^>]*-->\n(.*?)\n<!-- scenario-table:end -->", text, re.S)
    assert match is not None
    assert match.group(1) == scenario_table(load_scenarios(REPO / "scenarios")).rstrip("\n"), (
        "regenerate the table with `conformance sut-config --scenario-table`"
    )


def test_litellm_example_entries_are_what_sut_config_generates() -> None:
    scenarios = [s for s in load_scenarios(REPO / "scenarios") if s.id == "text-basic"]
    generated = render("litellm", "http://127.0.0.1:8790", scenarios, ["openai", "anthropic", "gemini", "groq"])
    doc = DOC.read_text(encoding="utf-8")
    body = generated.splitlines()[generated.splitlines().index("general_settings:") :]
    for line in body:
        assert line in doc, line


def test_the_portkey_example_are_what_sut_config_generates() -> None:
    scenarios = [s for s in load_scenarios(REPO / "scenarios") if s.id == "text-basic"]
    doc = DOC.read_text(encoding="utf-8")
    portkey = render("portkey", "http://127.0.0.1:8790", scenarios, ["gemini"]).splitlines()
    assert portkey[portkey.index('[headers."gemini"]') + 1] in doc
