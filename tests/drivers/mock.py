"""A MockTransport that records what an SDK sent and answers with hand-written provider bytes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import httpx2

from harness.scenarios import Scenario, load_scenarios
from tests.conftest import REPO

SCENARIOS: dict[str, Scenario] = {s.id: s for s in load_scenarios(REPO / "scenarios")}


def sse(*payloads: Any, events: list[str] | None = None, done: bool = False, crlf: bool = False) -> bytes:
    """An SSE body: one `data:` event per payload (JSON-encoded unless bytes/str), optional `event:` names."""
    nl = "\r\n" if crlf else "\n"
    out = []
    for i, payload in enumerate(payloads):
        data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        head = f"event: {events[i]}{nl}" if events else ""
        out.append(f"{head}data: {data}{nl}{nl}")
    if done:
        out.append(f"data: [DONE]{nl}{nl}")
    return "".join(out).encode("utf-8")


def ndjson(*payloads: Any) -> bytes:
    """An NDJSON body, one JSON object per line."""
    return b"".join(json.dumps(p, ensure_ascii=False).encode("utf-8") + b"\n" for p in payloads)


@dataclass
class Reply:
    """One canned HTTP answer."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, value: Any, status: int = 200, **headers: str) -> Reply:
        """A JSON body."""
        return cls(status, json.dumps(value).encode(), {"content-type": "application/json", **headers})

    @classmethod
    def stream(cls, body: bytes, media_type: str = "text/event-stream") -> Reply:
        """A streamed body, sent as the given chunks' concatenation."""
        return cls(200, body, {"content-type": media_type})


@dataclass
class Recorder:
    """Answers every request with `reply` and keeps each request for inspection."""

    reply: Reply
    requests: list[httpx2.Request | httpx.Request] = field(default_factory=list)

    @property
    def body(self) -> Any:
        """The last request's JSON body, parsed with plain json (not our codecs)."""
        return json.loads(self.requests[-1].content)

    @property
    def url(self) -> str:
        """The last request's URL."""
        return str(self.requests[-1].url)

    def _answer(self, request: Any, response_cls: Any) -> Any:
        request.read()
        self.requests.append(request)
        return response_cls(self.reply.status, content=self.reply.body, headers=self.reply.headers)

    def httpx2_client(self) -> httpx2.Client:
        """An httpx2 client (openai, anthropic, google-genai) whose transport is this recorder."""
        return httpx2.Client(transport=httpx2.MockTransport(lambda r: self._answer(r, httpx2.Response)))

    def httpx_client(self) -> httpx.Client:
        """An httpx client (ollama) whose transport is this recorder."""
        return httpx.Client(transport=httpx.MockTransport(lambda r: self._answer(r, httpx.Response)))
