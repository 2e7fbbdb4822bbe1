"""Provider-typical chunking: how each backend cuts text and tool arguments when the scenario does not say.

The typical values are protocol facts (`ProtocolFacts.chunking`), declared in each protocol's package and
measured against what the real services send; a profile inherits its family's unless it declares its own.
"""

from __future__ import annotations

from harness.protocols import registry
from harness.scenarios.model import Chunking


def effective(backend: str, scenario: Chunking) -> Chunking:
    """The scenario's hints where it gives them, the backend's typical chunking elsewhere."""
    typical = registry.facts(backend).chunking
    return Chunking(
        text_chunk_size=scenario.text_chunk_size or typical.text_chunk_size,
        arguments_chunk_size=scenario.arguments_chunk_size or typical.arguments_chunk_size,
        transport_chunk_bytes=scenario.transport_chunk_bytes or typical.transport_chunk_bytes,
    )
