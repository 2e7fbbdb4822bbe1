"""Imports every built-in protocol module so that each registers itself. Add new protocols here."""

from __future__ import annotations

# Each import below registers one protocol (or profile set) with harness.protocols.registry.
import harness.protocols.anthropic  # noqa: F401
import harness.protocols.gemini  # noqa: F401
import harness.protocols.ollama  # noqa: F401
import harness.protocols.openai  # noqa: F401
import harness.protocols.qwen_xml  # noqa: F401
