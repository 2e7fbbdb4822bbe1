"""Every exchange of the real-traffic corpus imports as a case (read where it lies, written to a tmp dir), with the
values that matter checked for a few of every family, and whose view each set of expectations is."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from harness import ir
from harness.importer import Imported
from harness.importer.corpus import CorpusItem, corpus_items, import_corpus
from harness.scenarios import load_scenarios
from harness.scenarios.model import ReplyError, ReplyOk
from tests.conftest import CORPUS, corpus_dir

pytestmark = pytest.mark.corpus

DECODER_VIEW = {
    # The anthropic SDK driver cannot write down server_tool_use / web_search_tool_result blocks.
    "anthropic/stream-web-search-citations.yaml#0",
    # Google's Go SDK's JSON-array stream (no alt=sse): the Python SDK cannot parse it.
    "gemini/json-array-stream-thought-function-call.yaml#0",
    "gemini/json-array-stream-thought-function-call.yaml#1",
    "gemini/json-array-stream-thought-function-call.yaml#2",
    # Mistral's thinking as a content array: the openai SDK's delta model rejects it.
    "openai_compat/mistral-stream-thinking-content-array.yaml#0",
    # The stream ends with [DONE] but no finish_reason: the SDK sees no stop reason.
    "openai_compat/openrouter-kimi-stream-tool-args-single-chunk.yaml#0",
}
"""Exchanges whose expectations are the decoder's view, because the family's SDK cannot read them (each says why)."""


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Imported]:
    corpus_dir("anthropic")
    out = tmp_path_factory.mktemp("corpus")
    done = import_corpus(CORPUS, corpus_items(CORPUS), scenarios=out / "s", cassettes=out / "c", backends=[])
    failed = {item.label: str(case) for item, case in done if not isinstance(case, Imported)}
    assert failed == {}
    return {item.label: case for item, case in done if isinstance(case, Imported)}


def test_every_exchange_imports_and_loads_as_a_scenario(imported: dict[str, Imported]) -> None:
    items: list[CorpusItem] = corpus_items(CORPUS)
    assert len(imported) == len(items) == 73
    assert Counter(case.backend for case in imported.values()) == Counter(item.protocol for item in items)
    folder = next(iter(imported.values())).scenario_path.parent
    assert {s.id for s in load_scenarios(folder)} == {case.scenario.id for case in imported.values()}
    assert {label for label, case in imported.items() if case.view == "decoder"} == DECODER_VIEW
    for label, case in imported.items():
        metadata = yaml.safe_load(case.cassette.read_text(encoding="utf-8"))["metadata"]
        assert (metadata["source"], metadata["backend"]) == ("real", case.backend), label
        assert metadata["origin"]["file"].endswith(label.split("#")[0]), label


def reply_ok(case: Imported) -> ReplyOk:
    reply = case.scenario.reply
    assert isinstance(reply, ReplyOk)
    return reply


def test_an_ollama_httprr_stream(imported: dict[str, Imported]) -> None:
    case = imported["ollama/api-chat-stream-local.httprr#0"]
    reply = reply_ok(case)
    assert case.view == "ollama SDK" and case.scenario.streaming == ["stream"]
    assert reply.content == [ir.TextPart(text="Okay, here we go!\n\n1, 2, 3, 4, 5\n")]
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (16, 22)
    assert case.scenario.expect.stop_reason == "end_turn" and case.scenario.expect.usage_present


def test_a_responses_stream_cut_by_max_output_tokens(imported: dict[str, Imported]) -> None:
    case = imported["openai_responses/stream-incomplete-max-output-tokens.yaml#0"]
    reply = reply_ok(case)
    assert case.view == "responses SDK"
    assert reply.stop_reason.kind == "max_tokens" and reply.stop_reason.raw == "max_output_tokens"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (14, 50)
    assert case.scenario.expect.text_equals is not None
    assert case.scenario.expect.text_equals.startswith("Sure! Here is a list of all 50 U.S. states:\n\n1. Alabama")


def test_a_gemini_stream_keeps_usage_at_start_and_reasoning_tokens(imported: dict[str, Imported]) -> None:
    case = imported["gemini/sse-stream-max-tokens.yaml#0"]
    reply = reply_ok(case)
    assert reply.content == [ir.TextPart(text="Here are all 50 U.S.")]
    assert reply.usage_at_start is not None and reply.usage_at_start.input_tokens == 9
    assert (reply.usage.output_tokens, reply.usage.reasoning_tokens) == (48, 38)
    assert case.scenario.expect.stop_reason == "max_tokens"


def test_a_groq_stream_with_usage_under_x_groq(imported: dict[str, Imported]) -> None:
    case = imported["openai_compat/groq-stream-text-x-groq-usage.yaml#0"]
    reply = reply_ok(case)
    assert case.backend == "groq" and reply.content == [ir.TextPart(text="Olá!")]
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (20, 4)


def test_an_openai_404_keeps_its_code(imported: dict[str, Imported]) -> None:
    case = imported["openai_chat/error-404-model-not-found.yaml#0"]
    reply = case.scenario.reply
    assert isinstance(reply, ReplyError) and reply.status == 404
    assert (reply.error.kind, reply.error.code) == (ir.ErrorKind.NOT_FOUND, "model_not_found")
    error = case.scenario.expect.error
    # Workers AI says not_found with 400: both statuses are accepted, so the SDK's exception is not checked.
    assert error is not None and (error.kind, error.status, error.exception) == ("not_found", [404, 400], None)


def test_nothing_of_the_corpus_lands_in_the_project(imported: dict[str, Imported]) -> None:
    project = Path(__file__).resolve().parents[2]
    assert all(not case.scenario_path.is_relative_to(project) for case in imported.values())
