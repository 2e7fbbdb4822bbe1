"""Qwen XML tool calls: `<tool_call>` text in a base protocol's output, as structured IR tool calls.

Registered as `qwen`, over the `openai` codec (vLLM / llama.cpp / Ollama OpenAI-compatible servers running a
Qwen model without a tool-call parser). Modules: `scanner` (the text state machine and call rendering),
`transform` (IR event and response transformers), `prompt` (tools in the system prompt), `codec` (the
`XmlToolCallCodec` wrapper).
"""

from __future__ import annotations

from harness.protocols import registry
from harness.protocols.qwen_xml.codec import OWN_LOSSES, PROMPT_LOSSES, RESHAPES, XmlToolCallCodec, own_losses
from harness.protocols.qwen_xml.facts import FACTS
from harness.protocols.qwen_xml.scanner import XmlToolCallScanner, parse_body, render_call
from harness.protocols.qwen_xml.transform import XmlToolCallDecoder, XmlToolCallEncoder

CODEC = XmlToolCallCodec("openai", "qwen")
registry.register(CODEC, facts=FACTS)

__all__ = [
    "CODEC",
    "OWN_LOSSES",
    "PROMPT_LOSSES",
    "RESHAPES",
    "XmlToolCallCodec",
    "XmlToolCallDecoder",
    "XmlToolCallEncoder",
    "XmlToolCallScanner",
    "own_losses",
    "parse_body",
    "render_call",
]
