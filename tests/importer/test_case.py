"""A corpus exchange imported as a case: the scenario file (schema, id = file name, requirements), the decoded
reply, expectations from what the backend's own SDK saw, the real cassette served byte for byte at its
boundaries, and every other backend's reference cassette."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness import ir
from harness.capture import load_interactions
from harness.faults.catalog import by_name
from harness.importer import Imported, ImportUsageError, from_capture, from_raw, import_exchange
from harness.protocols import HttpRequest, decode_events, registry
from harness.record import Replayer
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions
from harness.scenarios import load_scenario
from harness.scenarios.model import ReplyError, ReplyOk
from harness.stream import accumulate
from harness.wire.sse import iter_sse
from tests.conftest import corpus_dir

pytestmark = pytest.mark.corpus


def imported(root: Path, relative: str, interaction: int = 0, **kw: object) -> Imported:
    folder, name = relative.split("/")
    exchange = from_capture(corpus_dir(folder) / name, interaction, kw.pop("protocol", None))  # type: ignore[arg-type]
    scenario_id = name.split(".")[0] + (f"-{interaction}" if interaction else "")
    return import_exchange(
        exchange,
        scenario_id,
        scenarios=root / "scenarios",
        cassettes=root / "cassettes",
        **kw,  # type: ignore[arg-type]
    )


def served(root: Path, case: Imported) -> list[bytes]:
    """What the replay serves the recorded backend for the scenario's request."""
    codec = registry.get(case.backend)
    request = codec.encode_request(
        case.scenario.request_for(case.scenario.id, stream=case.scenario.streaming == ["stream"])
    )
    reply = Replayer(root / "cassettes", [case.scenario]).reply(case.backend, request)
    return reply.chunks


def test_stream_text_becomes_a_case(tmp_path: Path) -> None:
    case = imported(tmp_path, "anthropic/stream-text.yaml")
    scenario = load_scenario(case.scenario_path)
    assert scenario == case.scenario and case.scenario_path.name == "stream-text.yaml"
    assert scenario.streaming == ["stream"] and scenario.requires == []
    assert scenario.request.messages[0].content == [ir.TextPart(text="What is 4200 + 42?")]
    assert scenario.request.max_tokens == 16000
    reply = scenario.reply
    assert isinstance(reply, ReplyOk)
    assert reply.content == [ir.TextPart(text="4200 + 42 = 4242")]
    assert reply.usage_at_start is not None and reply.usage_at_start.input_tokens == 17  # what message_start said
    expect = scenario.expect
    assert (expect.text_equals, expect.stop_reason, expect.tool_calls, expect.usage_present) == (
        "4200 + 42 = 4242",
        "end_turn",
        [],
        True,
    )
    assert case.view == "anthropic SDK" and "stream-text.yaml#0" in scenario.description


def test_the_real_cassette_is_served_verbatim_and_says_where_it_came_from(tmp_path: Path) -> None:
    case = imported(tmp_path, "anthropic/stream-text.yaml")
    exchange = from_capture(corpus_dir("anthropic") / "stream-text.yaml", 0)
    chunks = served(tmp_path, case)
    assert chunks == list(exchange.chunks) and len(chunks) > 5
    metadata = yaml.safe_load(case.cassette.read_text(encoding="utf-8"))["metadata"]
    assert (metadata["source"], metadata["backend"], metadata["scenario"]) == ("real", "anthropic", "stream-text")
    origin = metadata["origin"]
    assert origin["file"].endswith("anthropic/stream-text.yaml") and origin["interaction"] == 0
    assert (origin["url"], origin["model"]) == ("https://api.anthropic.com/v1/messages", "claude-sonnet-4-0")


def test_every_other_backend_gets_its_reference_answer(tmp_path: Path) -> None:
    case = imported(tmp_path, "anthropic/stream-text.yaml")
    others = set(registry.names()) - {"anthropic"}
    assert set(case.references.written) == others and case.references.skipped == {}
    path = case.references.written["openai"]
    assert yaml.safe_load(path.read_text(encoding="utf-8"))["metadata"]["source"] == "reference"
    (item,) = load_interactions(path)
    answer = accumulate(decode_events(registry.get("openai"), item.response_chunks()))
    assert answer.response.content == [ir.TextPart(text="4200 + 42 = 4242")]
    assert answer.response.usage.input_tokens == 17


def test_tool_calls_with_arguments_and_parallel_requirement(tmp_path: Path) -> None:
    case = imported(tmp_path, "openai_chat/stream-parallel-tool-calls.yaml", backends=["anthropic"])
    scenario = case.scenario
    assert set(scenario.requires) == {"tools", "parallel_tools"}
    assert scenario.expect.stop_reason == "tool_use"
    calls = scenario.expect.tool_calls or []
    assert [(c.name, c.arguments) for c in calls] == [
        ("secret_retrieval_tool", {"password": "mellon"}),
        ("secret_retrieval_tool", {"password": "radiance"}),
    ]


def test_an_error_keeps_its_kind_and_lets_each_protocol_say_its_status(tmp_path: Path) -> None:
    # Gemini rejects a bad key with 400 INVALID_ARGUMENT (reason API_KEY_INVALID): the SDK sees a 400 bad request,
    # the decoder an auth error; another protocol says auth with its own 401 (Bedrock 403).
    case = imported(tmp_path, "gemini/error-400-api-key-invalid-stream-request.yaml", backends=["openai"])
    reply = case.scenario.reply
    assert isinstance(reply, ReplyError) and reply.status is None and reply.error.kind is ir.ErrorKind.AUTH
    error = case.scenario.expect.error
    assert error is not None
    assert (error.kind, error.status, error.exception) == (
        [ir.ErrorKind.INVALID_REQUEST, ir.ErrorKind.AUTH],
        [400, 401, 403],  # the recorded status, the kind's usual one, and Bedrock's 403 for auth
        None,
    )
    assert any("recorded status 400" in n for n in case.notes)
    anthropic_401 = imported(tmp_path, "anthropic/error-401-authentication.yaml", backends=[])
    expect = anthropic_401.scenario.expect.error
    assert expect is not None and (expect.kind, expect.status, expect.exception) == ("auth", [401, 403], None)
    overloaded = imported(tmp_path, "openai_compat/openrouter-error-429.yaml", backends=[]).scenario.expect.error
    assert overloaded is not None and overloaded.status == 429 and overloaded.exception == "rate_limit"


def test_a_midstream_error_is_scripted_after_what_came_before(tmp_path: Path) -> None:
    case = imported(tmp_path, "openai_compat/groq-stream-midstream-error-event.yaml", backends=["anthropic"])
    reply = case.scenario.reply
    assert isinstance(reply, ReplyOk) and reply.midstream_error is not None
    assert reply.midstream_error.error.kind is ir.ErrorKind.INVALID_REQUEST
    error = case.scenario.expect.error
    assert error is not None and error.exception == "stream_error"


def test_a_stream_without_finish_reason_is_told_the_stop_its_content_means(tmp_path: Path) -> None:
    case = imported(tmp_path, "openai_compat/openrouter-kimi-stream-tool-args-single-chunk.yaml", protocol="openrouter")
    reply = case.scenario.reply
    assert isinstance(reply, ReplyOk) and reply.stop_reason.kind == "tool_use" and reply.truncate_after is None
    assert case.scenario.expect.stop_reason == "tool_use" and case.scenario.expect.error is None
    assert case.view == "decoder" and "without a stop reason" in case.notes[0]


@pytest.mark.parametrize(
    ("relative", "why"),
    [
        ("gemini/json-array-stream-thought-function-call.yaml", "cannot parse the recorded answer"),
        ("openai_compat/mistral-stream-thinking-content-array.yaml", "cannot parse the recorded answer"),
        ("anthropic/stream-web-search-citations.yaml", "content block 'server_tool_use' has no IR form"),
    ],
)
def test_where_the_sdk_cannot_read_the_answer_the_decoder_stands_in_and_says_why(
    tmp_path: Path, relative: str, why: str
) -> None:
    case = imported(tmp_path, relative, backends=[])
    assert case.view == "decoder" and why in case.notes[0] and why in case.scenario.description
    assert case.scenario.expect.error is None and case.scenario.expect.text_equals is not None


def test_thinking_unasked_is_no_requirement_asked_it_is(tmp_path: Path) -> None:
    unasked = imported(tmp_path, "openai_compat/deepseek-stream-reasoning-content.yaml", backends=[])
    assert unasked.scenario.requires == [] and not unasked.scenario.expect.thinking_present
    asked = imported(tmp_path, "anthropic/stream-thinking.yaml", backends=[])
    assert asked.scenario.requires == ["thinking"] and asked.scenario.expect.thinking_present


def test_an_existing_scenario_is_replaced_only_when_forced(tmp_path: Path) -> None:
    imported(tmp_path, "anthropic/nonstream-text.yaml", backends=[])
    with pytest.raises(ImportUsageError, match="exists: choose another --id, or --force"):
        imported(tmp_path, "anthropic/nonstream-text.yaml", backends=[])
    assert imported(tmp_path, "anthropic/nonstream-text.yaml", backends=[], force=True).scenario.id == "nonstream-text"


def test_request_is_matched_by_the_scenario_not_its_recorded_model(tmp_path: Path) -> None:
    case = imported(tmp_path, "gemini/sse-stream-text.yaml", backends=[])
    request = HttpRequest("POST", "/v1beta/models/sse-stream-text:streamGenerateContent", {"alt": "sse"}, {}, b"")
    codec = registry.get("gemini")
    wire = codec.encode_request(case.scenario.request_for(case.scenario.id, stream=True))
    assert wire.path == request.path
    assert b"".join(served(tmp_path, case)) == from_capture(corpus_dir("gemini") / "sse-stream-text.yaml", 0).body


@pytest.mark.parametrize(("fault", "verdict"), [(None, "pass"), ("zero-input-at-message-start", "proxy_bug_response")])
def test_a_proxy_zeroing_message_start_usage_is_caught_on_a_real_answer(
    tmp_path: Path, fault: str | None, verdict: str
) -> None:
    # Real Gemini reports the prompt's tokens on its first chunk; translated for an Anthropic client they belong in
    # message_start. A proxy that sends 0 there fails against the real recorded answer.
    case = imported(tmp_path, "gemini/sse-stream-max-tokens.yaml", backends=["anthropic"])
    options = MatrixOptions(
        scenarios=tmp_path / "scenarios",
        cassettes=tmp_path / "cassettes",
        reports=tmp_path / "reports",
        frontends=["anthropic"],
        backends=["gemini"],
        only=[case.scenario.id],
        known=tmp_path / "none.toml",
        hooks=by_name(fault).hooks if fault else None,
        write_traces=False,
    )
    engine = Engine(options)
    engine.run()
    (result,) = engine.results
    assert result.verdict.value == verdict, result.reason
    if fault:
        divergence = result.first_divergence
        assert divergence is not None and divergence.path == "events[0].start_input_tokens"


def test_responses_stream_without_sequence_number_imports(tmp_path: Path) -> None:
    # OpenAI's Responses streams before `sequence_number` existed (March to April 2025) number no event: the
    # corpus's real stream with the field taken out stands for one (`import` said "expected an integer, got
    # NoneType").
    item = load_interactions(corpus_dir("openai_responses") / "stream-text.yaml")[0]
    events = [json.loads(e.data) for e in iter_sse([item.response.body])]
    bare = b"".join(
        f"event: {d['type']}\ndata: {json.dumps({k: v for k, v in d.items() if k != 'sequence_number'})}\n\n".encode()
        for d in events
    )
    (tmp_path / "body.sse").write_bytes(bare)
    (tmp_path / "request.json").write_bytes(item.request.body)
    exchange = from_raw(tmp_path / "body.sse", tmp_path / "request.json", protocol="responses")
    case = import_exchange(
        exchange, "unnumbered", scenarios=tmp_path / "scenarios", cassettes=tmp_path / "cassettes", backends=[]
    )
    expect = case.scenario.expect
    assert expect.stop_reason == "end_turn" and expect.usage_present
    assert expect.text_equals and expect.text_equals == "".join(
        d["delta"] for d in events if d["type"] == "response.output_text.delta"
    )
