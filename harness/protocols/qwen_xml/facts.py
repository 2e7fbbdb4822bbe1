"""The facts of `qwen`: an OpenAI-compatible server whose model writes tool calls as text (see
`harness.protocols.facts`). A backend of the `openai` family with that family's wire facts; no real endpoint of
its own (it is whatever server runs the model: `conformance record --base-url`)."""

from __future__ import annotations

from harness.protocols.openai.facts import backend

FACTS = backend(real=None, model="Qwen/Qwen3-Coder-30B-A3B-Instruct")
"""Qwen XML tool calls over Chat Completions."""
