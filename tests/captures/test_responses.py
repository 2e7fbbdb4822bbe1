"""Real OpenAI Responses answers recorded by vercel/ai, decoded by the `responses` codec.

Provenance (read from the snapshot, never copied; see docs/protocols.md):
- vercel/ai `packages/openai/src/responses/__fixtures__/*` (OpenAI: text, function calls, reasoning with encrypted
  content, compaction, hosted tools, an `error` then `response.failed` stream);
- vercel/ai `packages/azure/src/__fixtures__/*` (Azure OpenAI's Responses API);
- vercel/ai `packages/xai/src/responses/__fixtures__/*` (xAI's Responses API);
- vercel/ai `packages/open-responses/src/responses/__fixtures__/*` (LM Studio's and OpenAI's Open Responses answers).

Expected facts come from each answer's own terminal event (`response.completed` / `.incomplete`): its `output`
items' text, `function_call`s and reasoning summaries, its `status` and `usage`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import ir
from harness.protocols import decode_events, registry
from harness.stream import accumulate
from tests.captures.vercel_ai import Facts, arguments, body, decoded, events, ir_facts, listing, params, split, sse

DIRS = (
    "packages/openai/src/responses/__fixtures__/",
    "packages/azure/src/__fixtures__/",
    "packages/xai/src/responses/__fixtures__/",
    "packages/open-responses/src/responses/__fixtures__/",
)
OA = "packages/openai/src/responses/__fixtures__/"
NOT_READ = {
    "packages/azure/src/__fixtures__/azure-deepseek-reasoning.1.chunks.txt": "Chat Completions (test_chat)",
    "packages/azure/src/__fixtures__/azure-deepseek-reasoning.1.json": "Chat Completions (test_chat)",
    f"{OA}reasoning-model-temperature-error.json": "an error body (test_errors)",
    f"{OA}openai-error.1.json": "an error body (test_errors)",
    f"{OA}openai-custom-tool.1.chunks.txt": "hand-written (resp_custom_tool_test_001)",
    f"{OA}openai-custom-tool.1.json": "hand-written (resp_custom_tool_test_001)",
    f"{OA}parallel-tool-call-wrapper.1.chunks.txt": "hand-written (resp_parallel)",
    f"{OA}parallel-tool-call-wrapper.1.json": "hand-written (resp_parallel)",
    f"{OA}openai-apply-patch-tool-delete.1.chunks.txt": "hand-written ids",
    f"{OA}openai-shell-container.1.chunks.txt": "hand-written id, deltas trimmed",
    f"{OA}openai-shell-container.1.json": "hand-written id",
    f"{OA}openai-phase.1.chunks.txt": "trimmed: events cut out, numbering gaps",
    "packages/xai/src/responses/__fixtures__/xai-file-search-tool.1.json": "hand-written (resp_file_search_123)",
    "packages/xai/src/responses/__fixtures__/xai-image-generation-tool.1.chunks.txt": "ids replaced by zeros",
    "packages/xai/src/responses/__fixtures__/xai-image-generation-tool.1.json": "ids replaced by zeros",
}
"""Files of these folders not decoded here, with the reason (hand-written or edited files are not real wire)."""

CLIENT_CALLS = frozenset({"local_shell_call", "shell_call", "apply_patch_call", "custom_tool_call"})
"""Output items the client must execute, like a `function_call`: IR tool calls with a `call_type`."""
GAPS: dict[str, str] = {}

FILES = [p for p in listing() if p.startswith(DIRS) and p not in NOT_READ]
ERROR_STREAM = "packages/openai/src/responses/__fixtures__/openai-error.1.chunks.txt"
"""An `error` event then `response.failed` (insufficient_quota): read by its own test below."""


def _marks(path: str) -> Any:
    if path in GAPS:
        return pytest.param(path, marks=pytest.mark.xfail(reason=GAPS[path], strict=True))
    return path


def expected(response: dict[str, Any]) -> Facts:
    """The facts of a final Responses `response` object."""
    facts = Facts(stop=response["status"])
    for item in response.get("output") or []:
        if item["type"] == "message":
            facts.texts += [p.get("text", p.get("refusal")) for p in item["content"]]
        elif item["type"] == "function_call":
            facts.calls.append((item["call_id"], item["name"], arguments(item["arguments"])))
        elif _client_call(item):  # its name the tool's, its input the item's own fields (custom: free text)
            own = {k: v for k, v in item.items() if k not in ("id", "type", "status", "call_id")}
            name = item.get("name") or item["type"].removesuffix("_call")
            facts.calls.append((item["call_id"], name, own if "name" not in item else _json_or_none(item["input"])))
        elif item["type"] == "reasoning":
            facts.thinking += "".join(s["text"] for s in item.get("summary") or [])
            facts.thinking += "".join(c["text"] for c in item.get("content") or [] if c["type"] == "reasoning_text")
    usage = response.get("usage") or {}
    facts.usage = (usage.get("input_tokens"), usage.get("output_tokens"))
    return facts


def _client_call(item: dict[str, Any]) -> bool:
    """A client-executed item: not a shell call in a hosted container, not xAI's server-side search (`xs_call_`)."""
    hosted = item.get("environment") not in (None, {"type": "local"}) or str(item.get("call_id")).startswith("xs_")
    return item["type"] in CLIENT_CALLS and not hosted


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _client_calls(response: dict[str, Any]) -> list[str]:
    return [i["type"] for i in response.get("output") or [] if _client_call(i)]


STREAMS = [p for p in FILES if p.endswith(".chunks.txt") and p != ERROR_STREAM]


@pytest.mark.parametrize("path", params([_marks(p) for p in STREAMS]))
def test_recorded_responses_stream_decodes_to_the_answers_facts(path: str) -> None:
    for answer in split(events(path), "response.created"):
        final = answer[-1]
        assert final["type"] in ("response.completed", "response.incomplete"), final["type"]
        got = ir_facts(decoded("responses", sse(answer), stream=True), join=False)
        assert got == expected(final["response"]), path


@pytest.mark.parametrize("path", params([p for p in FILES if p.endswith(".json")]))
def test_recorded_responses_body_decodes_to_the_answers_facts(path: str) -> None:
    got = ir_facts(decoded("responses", body(path), stream=False), join=False)
    assert got == expected(json.loads(body(path))), path


CLIENT_CALL_FILES = [
    "packages/openai/src/responses/__fixtures__/openai-local-shell-tool.1.chunks.txt",
    "packages/openai/src/responses/__fixtures__/openai-shell-tool.1.chunks.txt",  # shell-local-multiturn has none
    "packages/openai/src/responses/__fixtures__/openai-apply-patch-tool.1.chunks.txt",
]


@pytest.mark.parametrize("path", params([p for p in CLIENT_CALL_FILES if p in FILES]))
def test_responses_client_executed_call_is_a_tool_call(path: str) -> None:
    answers = [a for a in split(events(path), "response.created") if _client_calls(a[-1]["response"])]
    assert answers, f"{path}: no client-executed call item"
    response = decoded("responses", sse(answers[0]), stream=True)
    assert response.stop_reason is not None and response.stop_reason.kind == "tool_use"
    calls = [p for p in response.content if isinstance(p, ir.ToolCallPart)]
    wire = [i for i in answers[0][-1]["response"]["output"] if _client_call(i)]
    kinds = {"custom_tool_call": "custom"}
    assert [(c.id, c.call_type) for c in calls] == [(i["call_id"], kinds.get(i["type"], i["type"][:-5])) for i in wire]


@pytest.mark.parametrize("path", params([p for p in FILES if p == ERROR_STREAM]))
def test_responses_error_event_then_response_failed_is_one_error(path: str) -> None:
    # OpenAI sends `error` and then `response.failed` for the same failure (here: insufficient_quota).
    payloads = events(path)
    assert [p["type"] for p in payloads][-2:] == ["error", "response.failed"]
    wire_error = payloads[-2]["error"]
    out = decode_events(registry.get("responses"), [sse(payloads)])
    result = accumulate(out)
    assert result.error is not None
    assert result.error.code == wire_error["code"]
    assert result.error.message == wire_error["message"]
    assert [e.kind for e in out].count("error") == 1
    assert isinstance(out[-1], ir.ErrorEvent)
