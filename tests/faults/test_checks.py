"""The runner's own checks that some faults are caught by: text buffering (from chunk ordinals), the frontend wire
decoded with its protocol, and the planted-key leak (verdict, reason, and no key left in the trace)."""

from __future__ import annotations

from pathlib import Path

from harness import ir
from harness.checks.wire import frontend_wire, text_buffering
from harness.protocols import encode_events, registry
from harness.rig import PLANTED_KEY_ENV
from harness.runner.wire_checks import leaks
from harness.trace import read_trace_bytes
from tests.checks.support import run_fault

STREAM = [
    ir.MessageStart(id="msg_1", model="m"),
    ir.TextStart(index=0),
    ir.TextDelta(index=0, text="Hel"),
    ir.TextDelta(index=0, text="lo"),
    ir.TextEnd(index=0),
    ir.Done(stop_reason=ir.StopReason(kind="end_turn"), usage=ir.Usage(input_tokens=3, output_tokens=2)),
]


def test_text_sent_as_it_arrives_passes_the_buffering_check() -> None:
    check = text_buffering((2, 3, 4, 5), (2, 3, 4, 5), False)
    assert check is not None and check.passed
    assert check.actual["first_client_text_after_upstream_chunk"] == 2


def test_text_held_until_the_last_upstream_text_chunk_is_buffered() -> None:
    check = text_buffering((2, 3, 4, 5), (6,), False)
    assert check is not None and not check.passed
    assert check.name == "stream.text_not_buffered"
    assert check.actual == {
        "upstream_text_chunks": 4,
        "last_upstream_text_chunk": 5,
        "first_client_text_after_upstream_chunk": 6,
        "client_text_chunks": 1,
    }


def test_short_texts_are_not_judged_for_buffering() -> None:
    # Two upstream text chunks sent together at the end is fair for a short answer: no verdict either way.
    assert text_buffering((2, 3), (3,), False) is None
    assert text_buffering((2, 3, 4), (), False) is None
    assert text_buffering((2, 3, 4), (4,), True) is None


def test_a_valid_anthropic_stream_passes_the_frontend_wire_check() -> None:
    body = encode_events(registry.get("anthropic"), STREAM)
    check = frontend_wire("anthropic", [body[:7], body[7:]])
    assert (check.name, check.passed, check.actual) == ("frontend_wire", True, "valid")


def test_done_marker_after_message_stop_fails_the_frontend_wire_check() -> None:
    body = encode_events(registry.get("anthropic"), STREAM)
    check = frontend_wire("anthropic", [body, b"data: [DONE]\n\n"])
    assert not check.passed
    assert check.actual == f"anthropic: message event after the end of the stream at byte {len(body)}"


def test_duplicate_message_start_fails_the_frontend_wire_check() -> None:
    body = encode_events(registry.get("anthropic"), [STREAM[0], *STREAM])
    check = frontend_wire("anthropic", [body])
    assert not check.passed and "message_start" in str(check.actual)


def test_leaks_name_the_parts_with_the_planted_key_or_a_real_looking_one() -> None:
    planted = "PLANTED-TEST-KEY-abc123"
    parts = {"sdk": f"error: bad key {planted}", "wire": "sk-ant-api03-abcdefghijklmnop", "request": "clean"}
    assert leaks(parts, planted) == ["sdk", "wire"]


def test_echoed_upstream_key_is_a_proxy_bug_and_never_reaches_the_trace(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    planted = "PLANTED-TEST-KEY-leaktest0123"
    monkeypatch.setenv(PLANTED_KEY_ENV, planted)
    code, result = run_fault(tmp_path, "upstream-key-echoed", "error-auth-401", stream=False)
    assert code == 1
    assert result.verdict == "proxy_bug_response"
    assert result.reason == "the proxy leaked its upstream key (translated run: upstream key found in sdk, wire)"
    leak = [c for c in result.runs["translated"].checks if c.name == "secret_leak"]
    assert [(c.passed, c.actual) for c in leak] == [(False, "upstream key found in sdk, wire")]
    assert planted not in result.model_dump_json()
    assert planted.encode() not in read_trace_bytes(
        tmp_path / "fault" / "cases" / "error-auth-401__openai-to-anthropic_nonstream.json.gz"
    )
    error = result.runs["translated"].sdk.error
    assert error is not None and "[REDACTED: planted upstream key]" in error.message
    timing = result.runs["translated"].timings
    assert timing.first_byte_ms is not None and 0 <= timing.first_byte_ms <= timing.total_ms
    # The baselines hold the same key and do not show it.
    assert all(c.passed for c in result.runs["baseline_frontend"].checks)
