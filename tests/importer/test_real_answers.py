"""Our proxy on real answers the corpus does not hold as such, each built from a real capture with one documented
change: two text blocks of one Anthropic answer through chat-style backends (the backend protocol's loss, never a
proxy bug, while a dropped block still is one); and a real Gemini 3 answer whose signature-only thinking block no
chat-style or Ollama wire can carry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import ir
from harness.capture import load_interactions
from harness.importer import Imported, from_capture, from_raw, import_exchange
from harness.proxy import HookContext, TranslateHooks
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions
from harness.scenarios.model import ReplyOk
from harness.wire.sse import iter_sse
from tests.conftest import corpus_dir

pytestmark = pytest.mark.corpus

SECOND = "Second block."


def _two_text_blocks(tmp_path: Path) -> Imported:
    """The corpus's real Anthropic stream-text answer with a second text block after its first (Anthropic sends
    several text blocks in one answer, e.g. around citations or server tools; the Messages stream format:
    content_block_start / _delta / _stop per block)."""
    item = load_interactions(corpus_dir("anthropic") / "stream-text.yaml")[0]
    out = []
    for event in iter_sse([item.response.body]):
        out.append((event.event, json.loads(event.data)))
        if out[-1][1]["type"] == "content_block_stop":
            out += [
                ("content_block_start", {"type": "content_block_start", "index": 1,
                                         "content_block": {"type": "text", "text": ""}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                         "delta": {"type": "text_delta", "text": SECOND}}),
                ("content_block_stop", {"type": "content_block_stop", "index": 1}),
            ]  # fmt: skip
    (tmp_path / "body.sse").write_bytes(b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in out))
    (tmp_path / "request.json").write_bytes(item.request.body)
    exchange = from_raw(tmp_path / "body.sse", tmp_path / "request.json", protocol="anthropic")
    backends = ["openai", "gemini", "ollama", "responses"]
    return import_exchange(
        exchange, "two-text-blocks", scenarios=tmp_path / "s", cassettes=tmp_path / "c", backends=backends
    )


def _only_first_block(_: HookContext) -> TranslateHooks:
    """A proxy that passes on the answer's first 16 characters of text and drops the rest (the second block)."""
    said: list[str] = []

    def event(e: ir.StreamEvent) -> tuple[ir.StreamEvent, ...]:
        if not isinstance(e, ir.TextDelta):
            return (e,)
        room = 16 - len("".join(said))
        said.append(e.text[: max(room, 0)])
        return (e.model_copy(update={"text": said[-1]}),) if said[-1] else ()

    return TranslateHooks(on_upstream_event=event)


DROPS_SECOND = TranslateHooks(per_request=_only_first_block)


@pytest.mark.parametrize(("hooks", "verdict"), [(None, "pass"), (DROPS_SECOND, "proxy_bug_response")])
def test_two_anthropic_text_blocks_through_chat_style_backends_are_the_backends_loss(
    tmp_path: Path, hooks: TranslateHooks | None, verdict: str
) -> None:
    case = _two_text_blocks(tmp_path)
    reply = case.scenario.reply
    assert [p.text for p in reply.content if isinstance(p, ir.TextPart)] == ["4200 + 42 = 4242", SECOND]  # type: ignore[union-attr]
    options = MatrixOptions(
        scenarios=tmp_path / "s",
        cassettes=tmp_path / "c",
        reports=tmp_path / "reports",
        frontends=["anthropic", "responses"],
        backends=["openai", "gemini", "ollama"],
        only=[case.scenario.id],
        streams=(True,),
        known=tmp_path / "none.toml",
        hooks=hooks,
        write_traces=False,
    )
    engine = Engine(options)
    engine.run()
    assert len(engine.results) == 6
    assert {r.case_id: r.verdict.value for r in engine.results} == {r.case_id: verdict for r in engine.results}


def _signature_only_block_dropped(event: ir.StreamEvent) -> tuple[ir.StreamEvent, ...]:
    return () if isinstance(event, ir.ThinkingStart | ir.ThinkingEnd) else (event,)


@pytest.mark.parametrize("hooks", [None, TranslateHooks(on_upstream_event=_signature_only_block_dropped)])
def test_gemini_signature_only_thinking_block_through_a_backend_without_signatures(
    tmp_path: Path, hooks: TranslateHooks | None
) -> None:
    # Gemini 3 signs its first functionCall (`thoughtSignature`, no thought text): the IR has an empty signed
    # thinking block before the call. Ollama's and Chat Completions' wires carry no signature (their losses say
    # `ThinkingPart.signature`), so through them the block is gone and the call comes first: their loss, not a
    # proxy bug. Through Anthropic, which carries signatures, a proxy that drops the block is caught.
    exchange = from_capture(corpus_dir("gemini") / "sse-stream-function-call-thought-signature-gemini3.yaml", 0)
    backends = ["ollama", "openai", "anthropic"]
    case = import_exchange(exchange, "sig-call", scenarios=tmp_path / "s", cassettes=tmp_path / "c", backends=backends)
    reply = case.scenario.reply
    assert isinstance(reply, ReplyOk)
    thinking = reply.content[0]
    assert isinstance(thinking, ir.ThinkingPart) and thinking.text == "" and thinking.signature
    options = MatrixOptions(
        scenarios=tmp_path / "s",
        cassettes=tmp_path / "c",
        reports=tmp_path / "reports",
        frontends=["gemini", "anthropic"],
        backends=backends,
        only=["sig-call"],
        streams=(True,),
        known=tmp_path / "none.toml",
        hooks=hooks,
        write_traces=False,
    )
    engine = Engine(options)
    engine.run()
    verdicts = {r.case_id: r.verdict.value for r in engine.results}
    caught = {c for c in verdicts if "->anthropic," in c} if hooks else set()
    assert len(verdicts) == 6 and len(caught) == (2 if hooks else 0)
    assert {c for c, v in verdicts.items() if v != "pass"} == caught


@pytest.mark.parametrize("signed", [False, True])
def test_gemini_code_execution_answer_imports_and_passes_through_the_proxy(tmp_path: Path, signed: bool) -> None:
    # Gemini's code execution answer (text, executableCode, codeExecutionResult, text; documented format, see
    # tests/protocols/gemini/test_code_execution.py) used to abort the decode, so it could not even be imported.
    # Signed: Gemini 3 puts a thoughtSignature on the executableCode part, which Gemini to Gemini wrote twice.
    from tests.protocols.gemini.test_code_execution import SIGNATURE, _code_execution_answer

    chunks = _code_execution_answer()
    if signed:
        chunks[1]["candidates"][0]["content"]["parts"][0]["thoughtSignature"] = SIGNATURE
    (tmp_path / "body.sse").write_bytes(b"".join(b"data: " + json.dumps(o).encode() + b"\r\n\r\n" for o in chunks))
    prompt = {"role": "user", "parts": [{"text": "Sum the first 50 primes; run code."}]}
    (tmp_path / "request.json").write_text(json.dumps({"contents": [prompt], "tools": [{"codeExecution": {}}]}))
    url = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    exchange = from_raw(tmp_path / "body.sse", tmp_path / "request.json", protocol="gemini", url=url)
    backends = ["anthropic", "openai"]
    case = import_exchange(exchange, "code-exec", scenarios=tmp_path / "s", cassettes=tmp_path / "c", backends=backends)
    expect = case.scenario.expect
    assert (expect.stop_reason, expect.usage_present) == ("end_turn", True)
    assert expect.text_equals == "I'll compute that with code.The sum of the first 50 prime numbers is 5117."
    options = MatrixOptions(
        scenarios=tmp_path / "s",
        cassettes=tmp_path / "c",
        reports=tmp_path / "reports",
        frontends=["gemini", "anthropic", "openai"],
        backends=["gemini"],
        only=["code-exec"],
        streams=(True,),
        known=tmp_path / "none.toml",
        write_traces=False,
    )
    engine = Engine(options)
    engine.run()
    assert [r.verdict.value for r in engine.results] == ["pass"] * 3


def test_an_empty_system_prompt_from_a_real_request_is_no_system_prompt(tmp_path: Path) -> None:
    # Real Responses requests carry `instructions: ""` (pydantic-ai's, March 2025): an empty system prompt. The
    # proxy sent `"system": ""` to Anthropic, whose decoder reads it as none, and the request diff called that a
    # proxy bug; Bedrock's SDK refuses an empty system block, so a Bedrock client's run could not even start.
    # The corpus's real stream-text exchange with that one field added.
    item = load_interactions(corpus_dir("openai_responses") / "stream-text.yaml")[0]
    request = {**json.loads(item.request.body), "instructions": ""}
    (tmp_path / "request.json").write_text(json.dumps(request))
    (tmp_path / "body.sse").write_bytes(item.response.body)
    exchange = from_raw(tmp_path / "body.sse", tmp_path / "request.json", protocol="responses")
    backends = ["anthropic", "bedrock"]
    case = import_exchange(exchange, "empty-sys", scenarios=tmp_path / "s", cassettes=tmp_path / "c", backends=backends)
    assert case.scenario.request.system == ""
    options = MatrixOptions(
        scenarios=tmp_path / "s",
        cassettes=tmp_path / "c",
        reports=tmp_path / "reports",
        frontends=["responses", "bedrock"],
        backends=backends,
        only=["empty-sys"],
        streams=(True,),
        known=tmp_path / "none.toml",
        write_traces=False,
    )
    engine = Engine(options)
    engine.run()
    assert {r.case_id: r.verdict.value for r in engine.results} == {
        f"empty-sys[{front}->{back},stream]": "pass" for front in ("responses", "bedrock") for back in backends
    }
