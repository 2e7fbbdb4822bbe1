"""docs/checks.md is generated from the registry and stays current."""

from __future__ import annotations

from harness.checks.doc import render
from tests.conftest import REPO


def test_docs_checks_md_is_current() -> None:
    assert (REPO / "docs" / "checks.md").read_text(encoding="utf-8") == render(), (
        "regenerate: python -m harness.checks.doc > docs/checks.md"
    )


def test_the_message_start_usage_rule_explains_itself() -> None:
    assert "no false alarm" in render()
