"""Secrets never land: a fake capture with a planted key in every place a key can hide (headers, the URL, the
request body, an error message that echoes it, a streamed answer) is imported, and no file written holds it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from harness.importer import from_capture, from_raw, import_exchange

PLANTED = "PLANTED-TEST-KEY-importleak42"
PROVIDER_SHAPED = "sk-proj-" + "Ab3" * 12  # the shape of a real OpenAI key (facts' key pattern)
CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "gpt-4o",
    "choices": [{"index": 0, "delta": {"role": "assistant", "content": f"Your key {PLANTED} is set."}}],
}
DONE_CHUNK = {**CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


def _request(stream: bool) -> dict[str, object]:
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": f"my key is {PLANTED}, the other {PROVIDER_SHAPED}"}],
        "api_key": PLANTED,
        "stream": stream,
    }
    return {
        "method": "POST",
        "uri": f"https://api.openai.com/v1/chat/completions?key={PLANTED}",
        "body": json.dumps(body),
        "headers": {
            "authorization": [f"Bearer {PLANTED}"],
            "x-api-key": [PLANTED],
            "openai-organization": ["org-secret"],
            "content-type": ["application/json"],
        },
    }


def fake_capture(path: Path) -> Path:
    error = {"error": {"message": f"Incorrect API key provided: {PLANTED}.", "type": "invalid_request_error"}}
    stream = "".join(f"data: {json.dumps(c)}\n\n" for c in (CHUNK, DONE_CHUNK)) + "data: [DONE]\n\n"
    headers = {"content-type": ["application/json"], "set-cookie": [f"session={PLANTED}"], "x-request-id": ["r1"]}
    interactions = [
        {
            "request": _request(False),
            "response": {
                "status": {"code": 401, "message": "Unauthorized"},
                "headers": headers,
                "body": {"string": json.dumps(error)},
            },
        },
        {
            "request": _request(True),
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {**headers, "content-type": ["text/event-stream"]},
                "body": {"string": stream},
            },
        },
    ]
    path.write_text(yaml.safe_dump({"version": 1, "interactions": interactions}), encoding="utf-8")
    return path


def written(root: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.yaml")))


def test_a_planted_key_in_a_capture_never_lands(tmp_path: Path) -> None:
    capture = fake_capture(tmp_path / "leaky.yaml")
    out = tmp_path / "out"
    for index in (0, 1):
        exchange = from_capture(capture, index)
        case = import_exchange(
            exchange, f"leaky-{index}", scenarios=out / "scenarios", cassettes=out / "cassettes", backends=["anthropic"]
        )
        assert any("replaced by REDACTED" in note for note in case.notes)
    text = written(out)
    assert len(list(out.rglob("*.yaml"))) == 6  # two scenarios, two real cassettes, two reference cassettes
    assert PLANTED not in text and PROVIDER_SHAPED not in text and "org-secret" not in text
    assert "REDACTED" in text
    real = yaml.safe_load((out / "cassettes" / "openai" / "leaky-0.nonstream.yaml").read_text(encoding="utf-8"))
    assert real["metadata"]["origin"]["url"] == "https://api.openai.com/v1/chat/completions?key=REDACTED"
    assert "set-cookie" not in real["interactions"][0]["response"]["headers"]
    assert real["interactions"][0]["response"]["headers"]["x-request-id"] == ["r1"]


def test_a_planted_key_in_raw_files_never_lands(tmp_path: Path) -> None:
    body = tmp_path / "answer.json"
    body.write_text(json.dumps({"error": {"message": f"bad key {PLANTED}", "type": "authentication_error"}}))
    request = tmp_path / "request.json"
    request.write_text(
        json.dumps({"model": "claude-x", "max_tokens": 8, "messages": [{"role": "user", "content": PLANTED}]})
    )
    exchange = from_raw(body, request, protocol="anthropic", status=401)
    out = tmp_path / "out"
    import_exchange(exchange, "raw-leak", scenarios=out / "scenarios", cassettes=out / "cassettes", backends=["openai"])
    assert PLANTED not in written(out) and "REDACTED" in written(out)


NOT_KEY_SHAPED = "hunter2-not-a-key"


def test_secrets_that_are_not_key_shaped_never_land(tmp_path: Path) -> None:
    # Issue 22: a password in the URL, signed-URL and Google key query parameters, credential body fields.
    capture = fake_capture(tmp_path / "creds.yaml")
    doc = yaml.safe_load(capture.read_text(encoding="utf-8"))
    request = doc["interactions"][0]["request"]
    request["uri"] = (
        f"https://user:{NOT_KEY_SHAPED}@api.openai.com/v1/chat/completions"
        f"?sig={NOT_KEY_SHAPED}1&x-goog-api-key={NOT_KEY_SHAPED}2&api-version=2024-06-01"
    )
    body = json.loads(request["body"])
    body["metadata"] = {"aws_secret_access_key": f"{NOT_KEY_SHAPED}3", "password": f"{NOT_KEY_SHAPED}4"}
    request["body"] = json.dumps(body)
    capture.write_text(yaml.safe_dump(doc), encoding="utf-8")
    out = tmp_path / "out"
    case = import_exchange(
        from_capture(capture, 0), "creds", scenarios=out / "scenarios", cassettes=out / "cassettes", backends=[]
    )
    text = written(out)
    assert NOT_KEY_SHAPED not in text
    assert any("credential(s) in the URL" in note for note in case.notes)
    assert any("credential field(s) in the request body" in note for note in case.notes)
    real = yaml.safe_load((out / "cassettes" / "openai" / "creds.nonstream.yaml").read_text(encoding="utf-8"))
    url = real["metadata"]["origin"]["url"]
    assert url.startswith("https://user:REDACTED@api.openai.com/") and "api-version=2024-06-01" in url
