"""Secrets never land in a cassette: every committed cassette is scanned, and a recording made with planted keys
(header, query and body) contains none of them."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.backends import respond
from harness.protocols import HttpRequest, registry
from harness.record import RecordMode, Source, record_one
from harness.record.scrub import (
    NON_ASCII_FOLDS,
    find_secrets,
    folded_prefix,
    leading_character,
    redact_text,
    rules,
    scrub_url,
)
from harness.scenarios.loader import load_scenarios
from tests.conftest import REPO

PLANTED = "PLANTED-TEST-KEY-k3y"
COMMITTED = sorted((REPO / "cassettes").rglob("*.yaml"))


def test_there_are_committed_cassettes() -> None:
    assert len(COMMITTED) > 100


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(REPO / "cassettes")))
def test_committed_cassette_has_no_secrets(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert find_secrets(text, [PLANTED]) == []
    for header in ("authorization:", "x-api-key:", "x-goog-api-key:", "api-key:"):
        assert f"\n      {header}" not in text.lower()


def test_scanner_finds_key_shapes() -> None:
    text = "Bearer abcdefghijklmnop1234 sk-ant-api03-abcdefgh sk-proj-" + "a" * 30 + " AIza" + "b" * 35
    assert len(find_secrets(text)) == 4
    assert find_secrets(f"x {PLANTED} y", []) == [PLANTED]


def test_query_keys_are_redacted() -> None:
    assert scrub_url("https://g.example/v1beta/models/m:generateContent?key=SECRET&alt=sse") == (
        "https://g.example/v1beta/models/m:generateContent?key=REDACTED&alt=sse"
    )


@pytest.mark.parametrize("backend", ["openai", "anthropic", "gemini"])
def test_a_recording_with_planted_keys_keeps_none_of_them(tmp_path: Path, backend: str) -> None:
    scenarios = load_scenarios(REPO / "scenarios")
    scenario = next(s for s in scenarios if s.id == "text-basic")
    seen: list[httpx2.Request] = []

    def provider(request: httpx2.Request) -> httpx2.Request | httpx2.Response:
        # A stand-in for the real provider: answers like the reference backend and echoes nothing secret.
        seen.append(request)
        http = HttpRequest.from_url(request.method, str(request.url), dict(request.headers), request.read())
        reply = respond(registry.get(backend), http, scenarios)
        return httpx2.Response(
            reply.status, headers={**reply.headers, "set-cookie": f"s={PLANTED}"}, content=reply.body
        )

    source = Source(
        kind="real",
        base_url="https://provider.invalid",
        api_key=PLANTED,
        model="text-basic",
        transport=httpx2.MockTransport(provider),
    )
    path = record_one(backend, scenario, True, scenarios=scenarios, root=tmp_path, source=source, mode=RecordMode.ALL)
    assert seen and PLANTED in " ".join(seen[0].headers.values()) + str(seen[0].url)  # the key really was sent
    assert PLANTED not in path.read_text()
    assert find_secrets(path.read_text(), [PLANTED]) == []


def _scan_every_pattern(text: str) -> list[str]:
    """`find_secrets` as it was before the literal prefilter: every pattern over the whole text."""
    return [
        m.group(0)
        for pattern in rules().key_patterns
        for m in pattern.finditer(text)
        if m.start() == 0 or not re.match(r"[A-Za-z0-9_\-]", text[m.start() - 1])
    ]


@pytest.mark.parametrize(
    "text",
    [
        "auth: BeArEr abcdefghijklmnop1234 and bearer\tqrstuvwxyz0123456789",
        "no key here, only the word bearing and BEARE R",
        "xbearer abcdefghijklmnop1234 (inside a longer token: no key)",
        "non-ASCII: Bearer abcdefghijklmnop1234 \u00e9t\u00e9",
        "non-ASCII folds: Bea\u0280er abcdefghijklmnop1234, \u212aey, \u017fk-" + "a" * 24,
        "",
    ],
)
def test_the_case_insensitive_prefilter_finds_what_a_scan_of_every_pattern_finds(text: str) -> None:
    assert rules().folded_prefixes.count("bearer") == 1  # the generic bearer pattern is prefiltered
    assert find_secrets(text) == _scan_every_pattern(text)


def test_a_folded_prefix_is_only_taken_where_every_match_begins_with_it() -> None:
    assert folded_prefix(re.compile(r"(?i)Bearer\s+\S+")) == "bearer"
    assert folded_prefix(re.compile(r"(?i)abc*d")) == "ab"  # a quantified last letter may be absent
    assert folded_prefix(re.compile(r"(?i)ab|cd")) == ""  # an alternation at the top level
    assert folded_prefix(re.compile(r"(?i)[]|]ab|cd")) == ""
    assert folded_prefix(re.compile(r"(?i)a(b|c)")) == "a"
    assert folded_prefix(re.compile(r"sk-[a-z]{20}")) == ""  # matched with its case: the regex has a fast start


KEYS = st.sampled_from(rules().key_patterns).flatmap(lambda p: st.from_regex(p, fullmatch=True))
"""A string of some key pattern's shape."""
NOISE = st.text(max_size=12) | st.sampled_from(
    ["sk-", "sk-ant-", "A", "AKIA", "ABSK", "AIza", "gsk_", "xai-", "bearer ", "BeArEr\t", "\u0130", "\u212a", "-", "x"]
)
"""Text around the keys: key starts without the rest, folds, token characters before a key, anything."""


@given(st.lists(KEYS | NOISE, max_size=8).map("".join))
def test_the_gated_scan_finds_what_a_scan_of_every_pattern_finds(text: str) -> None:
    """`find_secrets` (a case-insensitive pattern skipped where its literal start is not, patterns sharing a first
    character scanned by one gate first) finds the same keys, in the same order, as every pattern over the whole
    text."""
    assert find_secrets(text) == _scan_every_pattern(text)


@given(KEYS, st.text(max_size=40), st.text(max_size=40))
def test_a_key_planted_anywhere_is_found_and_redacted(key: str, before: str, after: str) -> None:
    text = f"{before} {key} {after}"
    assert key in find_secrets(text)
    assert key not in redact_text(text)


def test_only_the_named_ascii_letters_fold_to_a_non_ascii_character() -> None:
    """`find_secrets` looks for a case-insensitive literal start in the UTF-8 bytes lower-cased, which finds a
    non-ASCII character that matches an ASCII one only for the letters `NON_ASCII_FOLDS` names: every code point
    is tried against every character a literal start may hold."""
    ascii_chars = "abcdefghijklmnopqrstuvwxyz0123456789_=-"
    any_of = re.compile(f"(?i)[{re.escape(ascii_chars)}]")
    hits = [c for c in map(chr, range(0x80, 0x110000)) if any_of.fullmatch(c)]
    met = {letter for c in hits for letter in ascii_chars if re.fullmatch(f"(?i){re.escape(letter)}", c)}
    assert met == set(NON_ASCII_FOLDS), hits


def test_patterns_sharing_a_first_character_are_gated_together() -> None:
    assert leading_character(re.compile(r"(?:AKIA|ASIA)[A-Z0-9]{16}")) == "A"
    assert leading_character(re.compile(r"(?:(?:ab|ac)|ad)z")) == "a"
    assert leading_character(re.compile(r"ab*")) == "a"
    for alone in [r"(?:AKIA|BSIA)x", r"(?:a|a)*x", r"a|b", r"a*b", r"(a)b", r"[ab]c", r"\w", r"(?:a|)b", r"(?i)ab"]:
        assert leading_character(re.compile(alone)) == "", alone
    gates = {p.pattern: g for p, g in zip(rules().key_patterns, rules().gates, strict=True)}
    assert gates[r"ABSK[A-Za-z0-9+/=]{20,}"] is gates[r"AIza[0-9A-Za-z_\-]{35}"] is not None
    assert gates[r"PLANTED-TEST-KEY-[A-Za-z0-9]+"] is None  # alone with its first character


def test_url_credentials_are_only_looked_for_where_a_url_and_an_at_sign_both_are() -> None:
    assert redact_text("mail bob@example.com, no URL here") == "mail bob@example.com, no URL here"
    assert redact_text("see http://example.com/x (no credentials)") == "see http://example.com/x (no credentials)"
    masked = redact_text("mail bob@example.com, db http://bob:hunter22@db.internal/x")
    assert "hunter22" not in masked and "bob@example.com" in masked
