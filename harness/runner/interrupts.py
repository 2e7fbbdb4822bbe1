"""An interrupt asked for and not yet raised: Ctrl-C or SIGTERM whose KeyboardInterrupt was swallowed where it
landed (C code that clears every error, a finalizer), raised again where the engine goes on to its next run.

The signal handler calls `request` before it raises; the engine calls `raise_pending` at the top of each run. An
interrupt that propagated never reaches that point again (the cleanup code on its way out does not run cases),
so it is raised once; one that was swallowed is raised there, within one run."""

from __future__ import annotations

_pending: type[KeyboardInterrupt] | None = None


def request(kind: type[KeyboardInterrupt]) -> None:
    """A signal asked for `kind` (KeyboardInterrupt, or its SIGTERM subclass)."""
    global _pending
    _pending = kind


def clear() -> None:
    """Forget what was asked for (the command that the signal stopped is over)."""
    global _pending
    _pending = None


def raise_pending() -> None:
    """Raise the interrupt asked for, if any, and forget it."""
    global _pending
    kind, _pending = _pending, None
    if kind is not None:
        raise kind
