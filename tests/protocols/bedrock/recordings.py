"""Real Bedrock Converse traffic recorded by public projects' test suites, read where `fetch` put their
repositories (bare git mirrors), never copied into this project.

`CONFORMANCE_BEDROCK_RECORDINGS` names the folder holding the mirrors (default /work/.mirror, where the `fetch`
tool puts `<owner>+<name>/repo`). Each source is pinned to the commit its values were checked against; a test
that needs a source skips, saying how to get it, when the mirror or that commit is absent.

Sources:
- pydantic/pydantic-ai `tests/models/cassettes/test_bedrock/*.yaml`: vcrpy cassettes recorded with boto3
  against bedrock-runtime.us-east-1; ConverseStream bodies are `!!binary` event streams; Converse bodies are
  `body.string` or, re-serialized by pydantic-ai's serializer, `parsed_body`; the serializer drops response
  headers other than content-type (no x-amzn-requestid / x-amzn-errortype there).
- envoyproxy/ai-gateway `internal/translator/openai_awsbedrock_test.go`: `base64RealStreamingEvents`, one
  ConverseStream body of an Anthropic model (text, then a tool call), recorded from Bedrock.

Errors with their real headers (`x-amzn-errortype`, `x-amzn-requestid`), which pydantic-ai's serializer dropped,
come from recordings of bedrock-runtime's InvokeModel operation: the same service, the same error wire.
- social-growth-studio/req_llm (a fork of agentjido/req_llm) `test/support/fixtures/amazon_bedrock/*.json`;
- tmc/langchaingo `llms/bedrock/testdata/*.httprr`.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.wire.http import HttpRequest

ROOT = Path(os.environ.get("CONFORMANCE_BEDROCK_RECORDINGS", "/work/.mirror"))
PYDANTIC_AI = ("pydantic/pydantic-ai", "4fda38988f2939fa6ea9cdefcf120693e10ef491")
AI_GATEWAY = ("envoyproxy/ai-gateway", "c217da8a539570ba3f6014a60c2687c29a945f1f")
CASSETTES = "tests/models/cassettes/test_bedrock"
GATEWAY_TEST = "internal/translator/openai_awsbedrock_test.go"
REQ_LLM = ("social-growth-studio/req_llm", "f722d38fac9656b1d34cf9954ea6c1c98d0670cd")
LANGCHAINGO = ("tmc/langchaingo", "8fea3de63675b901cf7a2cdc435c204cb7a93643")
GIT_TIMEOUT = 60


@dataclass(frozen=True)
class Recording:
    """One recorded Converse exchange."""

    source: str
    """`owner/repo@commit:path#interaction`, for messages and the report."""
    path: str
    """The request path (`/model/<percent-encoded id>/converse[-stream]`)."""
    request_body: bytes
    """The request body as recorded."""
    status: int
    """HTTP status."""
    body: bytes
    """The response body: event stream bytes, or JSON (re-serialized where the cassette kept it parsed)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Response headers the cassette kept (lower-case names)."""

    @property
    def stream(self) -> bool:
        """Whether this is a ConverseStream exchange."""
        return self.path.endswith("/converse-stream")

    def request(self) -> HttpRequest:
        """The recorded request as a codec sees it."""
        return HttpRequest(
            method="POST", path=self.path, headers={"content-type": "application/json"}, body=self.request_body
        )


def _git_dir(repo: str, commit: str) -> Path:
    git = shutil.which("git")
    path = ROOT / repo.replace("/", "+") / "repo"
    if git is None or not path.is_dir():
        pytest.skip(
            f"recordings of {repo} not found at {path}: fetch github:{repo} (or set CONFORMANCE_BEDROCK_RECORDINGS)"
        )
    done = subprocess.run(
        [git, "--git-dir", str(path), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        timeout=GIT_TIMEOUT,
    )
    if done.returncode != 0:
        pytest.skip(f"the mirror of {repo} at {path} lacks commit {commit}, which these values were checked against")
    return path


def _git(repo: str, commit: str, *args: str) -> bytes:
    path = _git_dir(repo, commit)
    git = shutil.which("git") or "git"
    done = subprocess.run([git, "--git-dir", str(path), *args], capture_output=True, timeout=GIT_TIMEOUT, check=True)
    return done.stdout


def _show(repo: str, commit: str, path: str) -> bytes:
    return _git(repo, commit, "show", f"{commit}:{path}")


@functools.cache
def cassette_names() -> tuple[str, ...]:
    """The file names of pydantic-ai's Bedrock cassettes at the pinned commit."""
    repo, commit = PYDANTIC_AI
    listing = _git(repo, commit, "ls-tree", "--name-only", commit, f"{CASSETTES}/")
    return tuple(sorted(Path(line).name for line in listing.decode().splitlines() if line.endswith(".yaml")))


def _body(response: dict[str, Any]) -> bytes:
    if "parsed_body" in response:
        return json.dumps(response["parsed_body"], ensure_ascii=False).encode()
    value = response.get("body", {}).get("string", b"")
    return value.encode() if isinstance(value, str) else bytes(value)


def _headers(response: dict[str, Any]) -> dict[str, str]:
    out = {}
    for name, values in (response.get("headers") or {}).items():
        value = values[0] if isinstance(values, list) and values else values
        out[name.lower()] = value.decode() if isinstance(value, bytes) else str(value)
    return out


@functools.cache
def cassette(name: str) -> tuple[Recording, ...]:
    """The Converse exchanges of one pydantic-ai cassette (other hosts and count-tokens left out)."""
    repo, commit = PYDANTIC_AI
    doc = yaml.safe_load(_show(repo, commit, f"{CASSETTES}/{name}"))
    out = []
    for i, item in enumerate(doc["interactions"]):
        uri = item["request"]["uri"]
        path = "/" + uri.split(".amazonaws.com/", 1)[1] if "bedrock-runtime" in uri else ""
        if not path.endswith(("/converse", "/converse-stream")):
            continue
        body = item["request"]["body"]
        out.append(
            Recording(
                source=f"{repo}@{commit[:10]}:{CASSETTES}/{name}#{i}",
                path=path,
                request_body=body.encode() if isinstance(body, str) else bytes(body),
                status=int(item["response"]["status"]["code"]),
                body=_body(item["response"]),
                headers=_headers(item["response"]),
            )
        )
    return tuple(out)


def recording(name: str, index: int = 0) -> Recording:
    """One exchange of a pydantic-ai cassette, by file name and position among its Converse exchanges."""
    return cassette(name)[index]


def all_recordings() -> list[Recording]:
    """Every Converse exchange of every pydantic-ai Bedrock cassette."""
    return [item for name in cassette_names() for item in cassette(name)]


@functools.cache
def gateway_stream() -> bytes:
    """The ConverseStream body envoyproxy/ai-gateway embeds in its translator test."""
    repo, commit = AI_GATEWAY
    source = _show(repo, commit, GATEWAY_TEST).decode()
    match = re.search(r'const base64RealStreamingEvents = "([A-Za-z0-9+/=]+)"', source)
    assert match is not None, f"{repo}@{commit}:{GATEWAY_TEST} has no base64RealStreamingEvents"
    return base64.b64decode(match[1])


@dataclass(frozen=True)
class RecordedError:
    """One recorded HTTP error of bedrock-runtime, with the headers it came with."""

    source: str
    """`owner/repo@commit:path`."""
    status: int
    """HTTP status."""
    headers: dict[str, str]
    """Response headers (lower-case names)."""
    body: bytes
    """The JSON body."""


def req_llm_error(name: str) -> RecordedError:
    """The response of a req_llm Bedrock fixture (JSON: `response.status`, `.headers` lists, `.body` parsed)."""
    repo, commit = REQ_LLM
    path = f"test/support/fixtures/amazon_bedrock/{name}"
    response = json.loads(_show(repo, commit, path))["response"]
    headers = {k.lower(): v[0] if isinstance(v, list) else v for k, v in response["headers"].items()}
    return RecordedError(
        f"{repo}@{commit[:10]}:{path}", response["status"], headers, json.dumps(response["body"]).encode()
    )


def langchaingo_error(name: str, tmp: Path) -> RecordedError:
    """The first exchange of a langchaingo httprr trace, read with the harness's own capture loader."""
    from harness.capture import load_interactions

    repo, commit = LANGCHAINGO
    path = f"llms/bedrock/testdata/{name}"
    copy = tmp / Path(name).name  # the loader reads files; this is a temporary copy, not one in the project
    copy.write_bytes(_show(repo, commit, path))
    response = load_interactions(copy)[0].response
    return RecordedError(f"{repo}@{commit[:10]}:{path}", response.status, dict(response.headers), response.body)
