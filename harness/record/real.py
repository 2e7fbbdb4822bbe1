"""Real providers to record from. Where each lives, the environment variables that hold its key (first set wins)
and a default model are protocol facts (`ProtocolFacts.real`); keys are read at record time and never stored
(see scrub.py)."""

from __future__ import annotations

import os

from harness.protocols import registry


class MissingKeyError(LookupError):
    """The key for a real recording is not in the environment; says which variable to set."""


def resolve_endpoint(backend: str, *, base_url: str | None = None) -> tuple[str, str | None, str]:
    """(base URL, key, default model) for recording `backend` from the real provider."""
    endpoint = registry.facts(backend).real
    if endpoint is None:
        known = [name for name in registry.names() if registry.facts(name).real is not None]
        raise MissingKeyError(f"no real endpoint is known for {backend!r}; known: {', '.join(known)}")
    url = base_url or (os.environ.get(endpoint.host_env) if endpoint.host_env else None) or endpoint.base_url
    if url and not url.startswith(("http://", "https://")):
        url = f"http://{url}"  # a host variable is often host:port
    if not endpoint.key_env:
        return url, None, endpoint.model
    for name in endpoint.key_env:
        value = os.environ.get(name)
        if value:
            return url, value, endpoint.model
    raise MissingKeyError(
        f"recording {backend} from the real provider needs a key: set {' or '.join(endpoint.key_env)}"
    )


def placeholder_values(backend: str) -> dict[str, str]:
    """Placeholder -> real value for the account values `backend` writes into its request paths (the protocol's
    `RealEndpoint.placeholders`), read from their environment variables now and never stored."""
    endpoint = registry.facts(backend).real
    out: dict[str, str] = {}
    for placeholder, env in endpoint.placeholders if endpoint is not None else ():
        value = os.environ.get(env)
        if not value:
            raise MissingKeyError(f"recording {backend} from the real provider needs {env} (it goes into the URL)")
        out[placeholder] = value
    return out
