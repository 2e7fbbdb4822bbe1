"""Real providers to record from: base URL, the environment variables that hold the key (first set wins) and a
default model. Keys are read at record time and never stored (see scrub.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Endpoint:
    """Where and how to reach one real provider."""

    base_url: str
    """API root the codec's paths are appended to."""
    key_env: tuple[str, ...]
    """Environment variables holding the key, in order of preference (empty: no key, e.g. Ollama)."""
    model: str
    """Model recorded when none is given."""
    host_env: str | None = None
    """Environment variable that overrides the base URL (Ollama's OLLAMA_HOST)."""


ENDPOINTS: dict[str, Endpoint] = {
    "openai": Endpoint("https://api.openai.com", ("OPENAI_API_KEY",), "gpt-4o-mini"),
    "anthropic": Endpoint("https://api.anthropic.com", ("ANTHROPIC_API_KEY",), "claude-sonnet-4-5"),
    "gemini": Endpoint(
        "https://generativelanguage.googleapis.com", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "gemini-2.5-flash"
    ),
    "ollama": Endpoint("http://127.0.0.1:11434", (), "llama3.2", host_env="OLLAMA_HOST"),
    "groq": Endpoint("https://api.groq.com", ("GROQ_API_KEY",), "openai/gpt-oss-20b"),
    "deepseek": Endpoint("https://api.deepseek.com", ("DEEPSEEK_API_KEY",), "deepseek-chat"),
    "mistral": Endpoint("https://api.mistral.ai", ("MISTRAL_API_KEY",), "mistral-small-latest"),
    "xai": Endpoint("https://api.x.ai", ("XAI_API_KEY",), "grok-4-fast"),
    "openrouter": Endpoint("https://openrouter.ai/api", ("OPENROUTER_API_KEY",), "openai/gpt-4o-mini"),
    "together": Endpoint("https://api.together.xyz", ("TOGETHER_API_KEY",), "meta-llama/Llama-3.3-70B-Instruct-Turbo"),
}


class MissingKeyError(LookupError):
    """The key for a real recording is not in the environment; says which variable to set."""


def resolve_endpoint(backend: str, *, base_url: str | None = None) -> tuple[str, str | None, str]:
    """(base URL, key, default model) for recording `backend` from the real provider."""
    endpoint = ENDPOINTS.get(backend)
    if endpoint is None:
        raise MissingKeyError(f"no real endpoint is known for {backend!r}; known: {', '.join(sorted(ENDPOINTS))}")
    url = base_url or (os.environ.get(endpoint.host_env) if endpoint.host_env else None) or endpoint.base_url
    if url and not url.startswith(("http://", "https://")):
        url = f"http://{url}"  # OLLAMA_HOST is often host:port
    if not endpoint.key_env:
        return url, None, endpoint.model
    for name in endpoint.key_env:
        value = os.environ.get(name)
        if value:
            return url, value, endpoint.model
    raise MissingKeyError(
        f"recording {backend} from the real provider needs a key: set {' or '.join(endpoint.key_env)}"
    )
