"""Codecs by name: the only way the engine reaches a protocol."""

from __future__ import annotations

from harness.protocols.base import Codec

__all__ = ["Codec", "UnknownProtocolError", "get", "names", "register"]

_CODECS: dict[str, Codec] = {}


class UnknownProtocolError(KeyError):
    """No codec is registered under that name."""

    def __str__(self) -> str:
        return f"unknown protocol {self.args[0]!r}; known: {', '.join(sorted(_CODECS)) or '(none)'}"


def register(codec: Codec) -> Codec:
    """Add a codec under its name; a second codec with the same name is a programming error."""
    if codec.name in _CODECS and _CODECS[codec.name] is not codec:
        raise ValueError(f"protocol {codec.name!r} is already registered")
    _CODECS[codec.name] = codec
    return codec


def get(name: str) -> Codec:
    """The codec registered as `name`."""
    _load_builtins()
    try:
        return _CODECS[name]
    except KeyError:
        raise UnknownProtocolError(name) from None


def names() -> list[str]:
    """All registered protocol names, sorted."""
    _load_builtins()
    return sorted(_CODECS)


def _load_builtins() -> None:
    # Importing the modules registers the built-in protocols; done lazily so `ir`-only users stay light.
    from harness.protocols import builtin

    builtin.load()
