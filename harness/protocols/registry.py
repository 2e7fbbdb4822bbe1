"""Codecs and their facts by name: the only way the engine reaches a protocol."""

from __future__ import annotations

import difflib
from typing import TypeVar

from harness.ir import Capability
from harness.protocols.base import Codec
from harness.protocols.facts import ProtocolFacts, Sdk

__all__ = [
    "Codec",
    "MissingFactsError",
    "ProtocolFacts",
    "UnknownProtocolError",
    "facts",
    "get",
    "names",
    "register",
    "sdk",
]

C = TypeVar("C", bound=Codec)

_CODECS: dict[str, Codec] = {}
_FACTS: dict[str, ProtocolFacts] = {}
_loaded = False  # the built-in protocols are registered (`_load_builtins`)


class UnknownProtocolError(KeyError):
    """No codec is registered under that name; the message suggests the nearest name."""

    def __str__(self) -> str:
        name = str(self.args[0])
        near = difflib.get_close_matches(name, sorted(_CODECS), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return f"unknown protocol {name!r}{hint}; known: {', '.join(sorted(_CODECS)) or '(none)'}"


class MissingFactsError(LookupError):
    """A protocol is registered without its facts (or names an SDK nobody declares)."""


def register(codec: C, facts: ProtocolFacts | None = None) -> C:
    """Add a codec (and its facts, declared next to it) under its name; a second codec with the same name is a
    programming error, and so is a capability that is not a `Capability`."""
    if codec.name in _CODECS and _CODECS[codec.name] is not codec:
        raise ValueError(f"protocol {codec.name!r} is already registered")
    unknown = {str(c) for c in codec.capabilities} - {c.value for c in Capability}
    if unknown:
        raise ValueError(f"protocol {codec.name!r} declares unknown capabilities: {', '.join(sorted(unknown))}")
    _CODECS[codec.name] = codec
    if facts is not None:
        _FACTS[codec.name] = facts
    return codec


def get(name: str) -> Codec:
    """The codec registered as `name`."""
    _load_builtins()
    try:
        return _CODECS[name]
    except KeyError:
        raise UnknownProtocolError(name) from None


def facts(name: str) -> ProtocolFacts:
    """The facts registered with the codec `name` (see `harness.protocols.facts`)."""
    get(name)
    try:
        return _FACTS[name]
    except KeyError:
        raise MissingFactsError(
            f"protocol {name!r} is registered without its facts: declare a ProtocolFacts in its package and pass "
            "it to registry.register(codec, facts=...) (ARCHITECTURE.md, 'Adding a protocol')"
        ) from None


def sdk(name: str) -> Sdk:
    """The SDK that drives `name`'s clients: its own, or (for a profile) its family's."""
    own = facts(name).sdk
    if own is not None:
        return own
    family = get(name).family
    inherited = facts(family).sdk if family != name else None
    if inherited is None:
        raise MissingFactsError(f"protocol {name!r} has no SDK, and neither has its family {family!r}")
    return inherited


def names() -> list[str]:
    """All registered protocol names, sorted."""
    _load_builtins()
    return sorted(_CODECS)


def _load_builtins() -> None:
    # Importing the modules registers the built-in protocols; done lazily so `ir`-only users stay light. The flag
    # spares the tens of thousands of later lookups of a run the import statement (0.4 us each, ~0.5 % of a run).
    global _loaded
    if _loaded:
        return
    from harness.protocols import builtin

    builtin.load()
    _loaded = True
