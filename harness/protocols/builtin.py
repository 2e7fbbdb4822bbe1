"""The built-in protocol modules; importing each registers it with harness.protocols.registry. Add new ones here."""

from __future__ import annotations

import functools
import importlib

BUILTIN: tuple[str, ...] = (
    "harness.protocols.anthropic",
    "harness.protocols.anthropic.vertex",
    "harness.protocols.bedrock",
    "harness.protocols.cloudflare",
    "harness.protocols.gemini",
    "harness.protocols.gemini.vertex",
    "harness.protocols.ollama",
    "harness.protocols.openai",
    "harness.protocols.qwen_xml",
    "harness.protocols.responses",
    "harness.protocols.swink",
)


@functools.cache  # the registry asks tens of thousands of times per run; a failed import is tried again
def load() -> None:
    """Import (and so register) every built-in protocol; free after the first call."""
    for module in BUILTIN:
        importlib.import_module(module)
