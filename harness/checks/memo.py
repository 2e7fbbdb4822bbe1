"""What the checks remember per process: a value found once for a key (a payload's findings, a stream's decode)
is the value for that key, because it depends on nothing else. A matrix sends the same bytes again and again, so
each memo is bounded and forgotten all at once when full."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar, cast

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def digest(data: str | bytes) -> bytes:
    """A short digest of `data` (text as UTF-8), to key a memo by its bytes without keeping them."""
    return hashlib.blake2b(data.encode() if isinstance(data, str) else data, digest_size=20).digest()


_UNKNOWN = object()
"""What a memo holds for a key it has no value for (a value may be None)."""


class Memo(Generic[K, V]):
    """Values by key, at most `bound` of them (all forgotten when one more is found)."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self._values: dict[K, V] = {}

    def get(self, key: K, find: Callable[[], V]) -> V:
        """The value remembered for `key`, else `find()`'s (remembered; an exception it raises is not)."""
        known = self._values.get(key, _UNKNOWN)
        if known is not _UNKNOWN:
            return cast(V, known)  # not the marker: the value stored for the key
        value = find()
        if len(self._values) >= self.bound:
            self._values.clear()
        self._values[key] = value
        return value

    def clear(self) -> None:
        """Forget every value."""
        self._values.clear()

    def __len__(self) -> int:
        return len(self._values)


ANSWERS = 4096
"""Answers whose findings each check of the answer alone keeps (per process; forgotten all at once when full). A
matrix sends the same answer byte for byte again and again: through two backends whose recordings translate to
alike, and every run of a pass-through (about a third of a matrix's translated streams, long-output's too)."""
