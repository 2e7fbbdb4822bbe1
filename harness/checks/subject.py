"""What a check looks at: one run, as plain data the runner takes from the proxy's tap and the SDK driver."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness import ir

if TYPE_CHECKING:
    from harness.drivers.base import SdkResult
    from harness.scenarios.model import Scenario


@dataclass(frozen=True)
class Subject:
    """One run: who spoke to whom, what the SDK saw, and what crossed the wire on both sides."""

    role: str
    """`baseline_frontend`, `baseline_backend` or `translated`."""
    client: str
    """The frontend protocol (the SDK's)."""
    backend: str
    """The backend protocol or profile."""
    stream: bool
    scenario: Scenario
    result: SdkResult
    """What the SDK saw."""
    capabilities: frozenset[ir.Capability] | None = None
    """What the client's SDK, its protocol and the backend's all carry (None: everything)."""
    frontend_request: ir.Request | None = None
    """The client's request as the proxy decoded it."""
    upstream_request: ir.Request | None = None
    """The request sent upstream, decoded back (an exact system-prompt fold undone, as the diff does)."""
    upstream_body: bytes = b""
    """The raw body sent upstream."""
    upstream_headers: Mapping[str, str] = field(default_factory=dict)
    """The headers sent upstream, credentials left out."""
    frontend_headers: Mapping[str, str] = field(default_factory=dict)
    """The client's request headers, credentials left out."""
    frontend_response_headers: Mapping[str, str] = field(default_factory=dict)
    """The headers of the answer the client received, credentials left out."""
    frontend_status: int | None = None
    frontend_chunks: tuple[bytes, ...] = ()
    """What the client received, with its chunk boundaries."""
    truncated: bool = False
    """Whether the tap cut the recorded bytes (nothing about the whole answer can be judged)."""
    upstream_text_chunks: tuple[int, ...] = ()
    frontend_text_chunks: tuple[int, ...] = ()

    def answer_header(self, name: str) -> str | None:
        """A header of the answer the client received, by its name in any case; None when absent."""
        wanted = name.lower()
        return next((v for k, v in self.frontend_response_headers.items() if k.lower() == wanted), None)
