"""Error kinds and the IR error every protocol's errors map to."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from harness.ir.base import IRModel


class ErrorKind(StrEnum):
    """What went wrong, in provider-neutral terms."""

    THROTTLED = "throttled"
    CONTEXT_WINDOW_EXCEEDED = "context_window_exceeded"
    AUTH = "auth"
    PERMISSION = "permission"
    NOT_FOUND = "not_found"
    INVALID_REQUEST = "invalid_request"
    OVERLOADED = "overloaded"
    SERVER = "server"
    NETWORK = "network"
    TIMEOUT = "timeout"
    MALFORMED_STREAM = "malformed_stream"

    @property
    def retryable(self) -> bool:
        """Whether a client may retry the same request after this kind of error."""
        return self in _RETRYABLE


_RETRYABLE = frozenset(
    {ErrorKind.THROTTLED, ErrorKind.OVERLOADED, ErrorKind.SERVER, ErrorKind.NETWORK, ErrorKind.TIMEOUT}
)


class IRError(IRModel):
    """An error from a provider or the proxy, before or during a stream."""

    kind: ErrorKind
    """Provider-neutral category of the error."""
    message: str = ""
    """Human-readable message as the provider gave it."""
    status: int | None = None
    """HTTP status code, when the error came with one (None mid-stream)."""
    retryable: bool = False
    """Whether retrying the same request may succeed; defaults from the kind via `IRError.of`."""
    retry_after: float | None = Field(default=None, ge=0)
    """Seconds the provider asked the client to wait (Retry-After header or body field)."""
    code: str | None = None
    """The provider's own error type or code string (e.g. `rate_limit_error`, `RESOURCE_EXHAUSTED`)."""

    @classmethod
    def of(
        cls,
        kind: ErrorKind,
        message: str = "",
        *,
        status: int | None = None,
        retry_after: float | None = None,
        code: str | None = None,
    ) -> IRError:
        """Build an error whose `retryable` flag follows its kind."""
        return cls(
            kind=kind,
            message=message,
            status=status,
            retryable=kind.retryable,
            retry_after=retry_after,
            code=code,
        )
