"""The generated profile table: the committed `docs/profiles.md` is what the registered profiles render to, and
every registered profile declares capabilities the scenarios know and a family with an SDK."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.protocols.openai import OpenAICodec, Profile, quirks, table
from harness.protocols.openai.profile import chain
from harness.scenarios.model import Capability
from tests.protocols.openai.support import PROFILE_CODECS

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "profiles.md"
NAMES = {"openai", "deepseek", "groq", "mistral", "xai", "openrouter", "together", "vllm", "llamacpp", "lmstudio",
         "gptoss", "gemma", "azure", "cloudflare-openai"}  # fmt: skip


def test_docs_profiles_md_is_up_to_date() -> None:
    expected = table.render()
    assert DOC.read_text(encoding="utf-8") == expected, (
        "docs/profiles.md is stale: run `python -m harness.protocols.openai.table > docs/profiles.md`"
    )


def test_table_command_prints_the_document() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "harness.protocols.openai.table"], cwd=ROOT, capture_output=True, check=True
    )
    assert out.stdout.decode("utf-8") == table.render()


def test_one_row_per_registered_profile_with_its_quirks() -> None:
    text = table.render()
    assert {p.name for p in table.registered_profiles()} == NAMES == {c.name for c in PROFILE_CODECS}
    profile_section = text.split("## Native protocols", 1)[0]
    rows = [line for line in profile_section.splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == sorted(NAMES)
    mistral = next(r for r in rows if r.startswith("| `mistral`"))
    assert "`nine_alphanumerics`: Mistral: tool-call ids must be exactly 9 characters" in mistral
    assert "finish_reason `model_length` → max_tokens" in mistral and "| not sent |" in mistral
    azure = next(r for r in rows if r.startswith("| `azure`"))
    assert "`/openai/deployments/{deployment}/chat/completions?api-version=2024-10-21`" in azure
    assert "`api-key` header" in azure and "error `content_filter` → invalid_request" in azure
    gemma = next(r for r in rows if r.startswith("| `gemma`"))
    assert "all but nested_tool_schema, parallel_tools, prompt_cache, thinking, tool_choice, tools" in gemma
    assert "reshape `Request.system folded into the first user turn`" in gemma
    llamacpp = next(r for r in rows if r.startswith("| `llamacpp`"))
    # One line per hook, naming every place it is used.
    assert llamacpp.count("`timings_cache_n`:") == 1 and "`decode_chunk`, `decode_body` `timings_cache_n`" in llamacpp


def test_chained_hooks_are_listed_one_by_one() -> None:
    hook = chain(quirks.x_groq_usage, quirks.timings_cache_n)
    lines = table.quirks(Profile(name="both", decode_chunk=hook))
    assert [line.split(":")[0] for line in lines] == [
        "`decode_chunk` `x_groq_usage`",
        "`decode_chunk` `timings_cache_n`",
    ]
    # A chain applies its hooks in order.
    chunk = {"x_groq": {"usage": {"prompt_tokens": 3}}, "timings": {"cache_n": 2}}
    assert hook(chunk)["usage"] == {"prompt_tokens": 3, "prompt_tokens_details": {"cached_tokens": 2}}


@pytest.mark.parametrize("codec", PROFILE_CODECS, ids=lambda c: c.name)
def test_profile_capabilities_and_family_are_known(codec: OpenAICodec) -> None:
    assert codec.capabilities <= {c.value for c in Capability}
    assert codec.family == "openai" and codec.profile.family == "openai"


def test_the_native_protocols_have_a_row_each_from_their_facts() -> None:
    native = table.render().split("## Native protocols", 1)[1]
    rows = {r.split("`")[1]: r for r in native.splitlines() if r.startswith("| `")}
    assert {"anthropic", "bedrock", "cloudflare", "gemini", "ollama", "swink"} <= set(rows)
    assert not set(rows) & NAMES  # OpenAI-compatible profiles are in the table above
    assert "`POST /model/{target:path}`" in rows["bedrock"]
    assert "`application/vnd.amazon.eventstream`" in rows["bedrock"]
    assert "SigV4" in rows["bedrock"] and "replay checks the credentials' shape (`rejection`)" in rows["bedrock"]
    assert "`GET /client/v4/accounts/{account_id}/ai/models/search`" in rows["cloudflare"]
    assert "URL placeholder `00000000000000000000000000000000` ← `CLOUDFLARE_ACCOUNT_ID`" in rows["cloudflare"]
    assert "stream only" in rows["swink"] and "none (a user's own deployment)" in rows["swink"]
