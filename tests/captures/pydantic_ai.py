"""pydantic/pydantic-ai's vcrpy cassettes, read where `fetch` put the snapshot (see tests/protocols/mirror.py).

Each cassette is YAML holding `interactions`, each a recorded `request` and `response`. pydantic-ai's serializer
keeps a JSON body parsed (`parsed_body`, re-serialized here as JSON) and any other body as `body.string`: a
stream's raw bytes (SSE as the provider sent it, OpenRouter's `: OPENROUTER PROCESSING` comments included), or
`!!binary` bytes. Files the snapshot lists but does not hold (large ones), Git LFS pointers and files in another
format (websocket recordings) are not read, each with its reason. The facts a test expects are read from the
exchange itself (`sse_payloads` is plain line splitting, not the codecs' SSE reader).
"""

from __future__ import annotations

import functools
import json
import subprocess
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from tests.protocols.mirror import PYDANTIC_AI

LFS = b"version https://git-lfs"


@dataclass(frozen=True)
class Exchange:
    """One recorded request and its response."""

    where: str
    """`path#n`: the cassette and the interaction's position in it."""
    uri: str
    """The request URI."""
    status: int
    """The response status."""
    content_type: str
    """The response content type ('' when not kept)."""
    body: bytes
    """The response body: raw bytes, or JSON re-serialized from `parsed_body`."""

    @property
    def stream(self) -> bool:
        """Whether the body is an SSE stream."""
        return self.content_type.startswith("text/event-stream") or self.body.lstrip().startswith((b"data:", b":"))

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.body)


@functools.cache
def listing() -> tuple[str, ...]:
    """Every cassette path in the snapshot (empty when the snapshot is absent)."""
    if not (PYDANTIC_AI.path / "HEAD").is_file():
        return ()
    done = subprocess.run(
        ["git", "--git-dir", str(PYDANTIC_AI.path), "ls-tree", "-r", "--name-only", "HEAD"],
        capture_output=True,
        timeout=60,
        check=True,
    )
    return tuple(p for p in done.stdout.decode().splitlines() if "/cassettes/" in p and p.endswith(".yaml"))


def params(paths: list[Any]) -> list[Any]:
    """pytest params over `paths`, or one skipped param saying how to get the snapshot."""
    if paths:
        return paths
    why = f"pydantic/pydantic-ai snapshot not found at {PYDANTIC_AI.path} (fetch it or set {PYDANTIC_AI.env})"
    return [pytest.param("absent", marks=pytest.mark.skip(reason=why))]


def _raw(path: str) -> bytes:
    done = subprocess.run(
        ["git", "--git-dir", str(PYDANTIC_AI.path), "show", f"HEAD:{path}"], capture_output=True, timeout=30
    )
    if done.returncode != 0:
        pytest.skip(f"{path} is listed but not held by the snapshot (a large file)")
    if done.stdout.startswith(LFS):
        pytest.skip(f"{path} is a Git LFS pointer")
    return done.stdout


def _body(response: dict[str, Any]) -> bytes:
    if "parsed_body" in response:
        return json.dumps(response["parsed_body"], ensure_ascii=False).encode("utf-8")
    value = (response.get("body") or {}).get("string", b"")
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


@functools.cache
def exchanges(path: str) -> tuple[Exchange, ...]:
    """The recorded exchanges of one cassette."""
    loaded = yaml.safe_load(_raw(path))
    recorded = loaded.get("interactions") if isinstance(loaded, dict) else None
    if not isinstance(recorded, list) or not recorded:
        pytest.skip(f"{path} holds no interactions")
    if not all(isinstance(i, dict) and "request" in i and "response" in i for i in recorded):
        pytest.skip(f"{path} is not a request/response cassette (a websocket recording)")
    out = []
    for n, interaction in enumerate(recorded):
        response = interaction["response"]
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        kind = headers.get("content-type") or [""]
        out.append(
            Exchange(
                where=f"{path}#{n}",
                uri=interaction["request"]["uri"],
                status=int(response["status"]["code"]),
                content_type=kind[0] if isinstance(kind, list) else str(kind),
                body=_body(response),
            )
        )
    return tuple(out)


def sse_payloads(data: bytes) -> list[Any]:
    """The JSON of every `data:` line of an SSE body (`[DONE]` left out), by plain line splitting."""
    out = []
    for line in data.decode("utf-8").splitlines():
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            out.append(json.loads(line[5:]))
    return out
