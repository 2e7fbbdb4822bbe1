"""Reading other projects' test fixtures where `fetch` put them (a git directory under /work/.mirror), never copies.

Each source is a git directory found through an environment variable or its default mirror path; a test that
needs one skips, with the reason, when it is absent. Files are read at the snapshot's HEAD with `git show`.
"""

from __future__ import annotations

import codecs
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

MIRROR = Path(os.environ.get("CONFORMANCE_MIRROR", "/work/.mirror"))


@dataclass(frozen=True)
class Source:
    """One public repository snapshot: where it is, and which variable overrides that."""

    repo: str
    """owner/name on GitHub."""
    env: str
    """Environment variable holding the path of its git directory."""

    @property
    def path(self) -> Path:
        """The git directory."""
        default = MIRROR / self.repo.replace("/", "+") / "repo"
        return Path(os.environ.get(self.env, default))

    def read(self, file: str) -> str:
        """`file` at the snapshot's HEAD; skips when the snapshot is not here."""
        if not (self.path / "HEAD").is_file():
            pytest.skip(f"{self.repo} snapshot not found at {self.path} (set {self.env})")
        done = subprocess.run(
            ["git", "--git-dir", str(self.path), "show", f"HEAD:{file}"],
            capture_output=True,
            timeout=30,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"{self.repo}: {file} not in the snapshot: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout.decode("utf-8")

    def commit(self) -> str:
        """The snapshot's HEAD commit (for messages)."""
        done = subprocess.run(
            ["git", "--git-dir", str(self.path), "rev-parse", "HEAD"], capture_output=True, timeout=30, check=False
        )
        return done.stdout.decode().strip()


SWINK = Source("SuperSwinkAI/Swink-Agent", "SWINK_AGENT_REPO")
"""swink-agent: `adapters/src/proxy.rs` and `adapters/tests/suite/proxy_http.rs` hold its proxy streams."""

CLOUDFLARE_AI = Source("cloudflare/ai", "CLOUDFLARE_AI_REPO")
"""Cloudflare's AI SDK providers: `packages/workers-ai-provider/test/*.test.ts` hold Workers AI wire bodies."""


def rust_array_body(source: str, function: str) -> str:
    """The string a Rust test builds as `[r#"..."#, "", ...].join("\\n")` inside `fn function`."""
    start = source.index(f"fn {function}(")
    begin = source.index("[", start)
    close = re.compile(r'\]\s*\.join\(\s*"\\n"\s*\)').search(source, begin)
    assert close is not None, function
    items = re.findall(r'r#"(.*?)"#|"((?:[^"\\]|\\.)*)"', source[begin : close.start()], flags=re.S)
    return "\n".join(raw or codecs.decode(plain, "unicode_escape") for raw, plain in items)


def rust_raw_string(source: str, function: str) -> str:
    """The first `r#"..."#` literal inside `fn function`."""
    start = source.index(f"fn {function}(")
    match = re.compile(r'r#"(.*?)"#', re.S).search(source, start)
    assert match is not None, function
    return match.group(1)


def js_joined_body(source: str, title: str, constants: dict[str, str] | None = None) -> str:
    """The body a vitest case titled `title` builds as `[`...`, "..."].join("")`, JS escapes applied."""
    start = source.index(title)
    begin = source.index("[", source.index("new Response(", start))
    end = source.index("].join(", begin)
    items = re.findall(r'`((?:[^`\\]|\\.)*)`|"((?:[^"\\]|\\.)*)"', source[begin:end], flags=re.S)
    text = "".join(a or b for a, b in items)
    for name, value in (constants or {}).items():
        text = text.replace("${" + name + "}", value)
    return codecs.decode(text, "unicode_escape")


VERCEL_AI = Source("vercel/ai", "VERCEL_AI_REPO")
"""Vercel's AI SDK: `packages/*/src/**/__fixtures__/*.chunks.txt` (one recorded stream event per line) and `*.json`
(recorded bodies) of real provider answers; read by tests/captures."""

PYDANTIC_AI = Source("pydantic/pydantic-ai", "PYDANTIC_AI_REPO")
"""pydantic-ai: `tests/**/cassettes/**/*.yaml`, vcrpy cassettes of real provider exchanges (JSON bodies kept parsed
as `parsed_body`, streams as the raw body string); read by tests/captures/pydantic_ai.py."""
