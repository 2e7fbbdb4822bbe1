"""The frontend and backend names a user gives for a matrix, checked before anything runs: an unknown name gets
the nearest known one, and a backend-only profile given as a frontend is told so, with the frontends there are."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from harness.protocols import registry


class MatrixNameError(ValueError):
    """A frontend or backend name the matrix cannot use; the message names the axis, the name and what is allowed."""


def _near(name: str, known: Sequence[str]) -> str:
    match = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""


def _not_a_frontend(name: str) -> str:
    """Why a registered protocol is no frontend, from its facts."""
    own = registry.facts(name)
    family = registry.get(name).family
    if own.sdk is None and family != name:
        return f"a backend-only profile of {family} (no proxy routes or SDK of its own; the {family} SDK drives it)"
    if own.frontend is None:
        return "backend only: the proxy serves no frontend routes for it"
    return "backend only: it has no SDK driver of its own"


def check(frontends: Sequence[str], backends: Sequence[str], allowed_frontends: Sequence[str]) -> None:
    """Raise `MatrixNameError` for the first name of either axis the matrix cannot use."""
    known = registry.names()
    listed = ", ".join(allowed_frontends)
    for name in frontends:
        if name not in known:
            raise MatrixNameError(
                f"frontend {name!r}: unknown protocol{_near(name, allowed_frontends)}; frontends: {listed}"
            )
        if name not in allowed_frontends:
            raise MatrixNameError(f"frontend {name!r}: {_not_a_frontend(name)}; frontends: {listed}")
    for name in backends:
        if name not in known:
            raise MatrixNameError(
                f"backend {name!r}: unknown protocol{_near(name, known)}; backends: {', '.join(known)}"
            )
