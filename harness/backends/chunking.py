"""Provider-typical chunking: how each backend cuts text and tool arguments when the scenario does not say.

Values follow what the real services send (see ../shared/corpus): OpenAI a few characters per delta and
argument fragments; Anthropic somewhat larger text deltas and input_json_delta fragments; Gemini whole
sentences and whole functionCall objects; Ollama one token per line and whole tool calls; Groq and xAI whole
tool calls in one chunk.
"""

from __future__ import annotations

from harness.scenarios.model import Chunking

TYPICAL: dict[str, Chunking] = {
    "openai": Chunking(text_chunk_size=4, arguments_chunk_size=6),
    "anthropic": Chunking(text_chunk_size=7, arguments_chunk_size=10),
    "gemini": Chunking(text_chunk_size=24),
    "ollama": Chunking(text_chunk_size=3),
    "groq": Chunking(text_chunk_size=5),
    "xai": Chunking(text_chunk_size=6),
    "mistral": Chunking(text_chunk_size=5),
    "deepseek": Chunking(text_chunk_size=3, arguments_chunk_size=4),
}


def effective(backend: str, backend_family: str, scenario: Chunking) -> Chunking:
    """The scenario's hints where it gives them, the backend's typical chunking elsewhere."""
    typical = TYPICAL.get(backend) or TYPICAL.get(backend_family) or Chunking()
    return Chunking(
        text_chunk_size=scenario.text_chunk_size or typical.text_chunk_size,
        arguments_chunk_size=scenario.arguments_chunk_size or typical.arguments_chunk_size,
        transport_chunk_bytes=scenario.transport_chunk_bytes or typical.transport_chunk_bytes,
    )
