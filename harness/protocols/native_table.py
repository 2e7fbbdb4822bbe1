"""The native protocols' section of `docs/profiles.md`: one row per base protocol that is not an OpenAI-compatible
profile, generated from its registered codec and facts (so the document cannot drift from the declarations).

`harness.protocols.openai.table` renders the whole document and appends this section.
"""

from __future__ import annotations

import inspect
import re

from harness.ir import Capability
from harness.protocols import registry
from harness.protocols.base import Codec
from harness.protocols.facts import ProtocolFacts

HEADER = """## Native protocols

Each protocol below is a codec of its own (`harness/protocols/<name>/`, see ARCHITECTURE.md, "Adding a
protocol"). *Frontend* is the routes the built-in proxy serves it on (the matrix drives them with its SDK);
*Auth* is the summary of the codec's `with_auth`; *Capabilities* are relative to every scenario
capability ({all}); *Notes* are the facts that set it apart (a stream-only protocol, a key the proxy signs with,
placeholders in its URLs).
"""
ALL = frozenset(Capability)


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().replace("|", "\\|")


def _summary(fn: object) -> str:
    """The first paragraph of a function's docstring, on one line."""
    return _cell((inspect.getdoc(fn) or "").split("\n\n", 1)[0]).rstrip(".")


def native_protocols() -> list[str]:
    """Registered base protocols that are not OpenAI-compatible profiles (their own family, not the openai codec
    class), by name."""
    from harness.protocols.openai.codec import OpenAICodec

    return [
        name
        for name in registry.names()
        if registry.get(name).family == name and not isinstance(registry.get(name), OpenAICodec)
    ]


def _capabilities(codec: Codec) -> str:
    missing = sorted(c.value for c in ALL - frozenset(codec.capabilities))
    return f"all but {', '.join(missing)}" if missing else "all"


def _frontend(facts: ProtocolFacts) -> str:
    if facts.frontend is None:
        return "backend only"
    return "<br>".join(f"`POST {route.path}`" for route in facts.frontend.routes)


def _model_list(facts: ProtocolFacts) -> str:
    if facts.model_list is None:
        return "none"
    return "<br>".join(f"`GET {path}`" for path in (*facts.model_list.paths, *facts.model_list.item_paths))


def _sdk(facts: ProtocolFacts) -> str:
    if facts.sdk is None:
        return "its family's"
    return f"`{facts.sdk.package}` (`{facts.sdk.driver.rsplit('.', 1)[-1]}`)"


def _real(facts: ProtocolFacts) -> str:
    if facts.real is None:
        return "none (a user's own deployment)"
    keys = " or ".join(f"`{k}`" for k in facts.real.key_env) or "no key"
    return f"`{facts.real.base_url}` ({keys})"


def notes(facts: ProtocolFacts) -> list[str]:
    """What sets a protocol apart in its facts, one line each."""
    out = []
    if facts.stream_only:
        out.append("stream only: its non-streamed cases are unsupported")
    if facts.secrets.key_shape != "{key}":
        out.append(f"upstream key shape `{facts.secrets.key_shape.replace('{key}', 'SECRET')}`")
    if facts.secrets.check is not None:
        out.append(f"replay checks the credentials' shape (`{facts.secrets.check.__name__}`)")
    if facts.real is not None:
        out += [f"URL placeholder `{p}` ← `{env}` when recording" for p, env in facts.real.placeholders]
    return out


def row(name: str) -> str:
    """One table row."""
    codec, facts = registry.get(name), registry.facts(name)
    cells = [
        f"`{name}`",
        _frontend(facts),
        _model_list(facts),
        f"`{codec.stream_media_type}`",
        _summary(codec.with_auth),
        _sdk(facts),
        _capabilities(codec),
        _real(facts),
        "<br>".join(_cell(n) for n in notes(facts)) or "none",
    ]
    return "| " + " | ".join(cells) + " |"


def render() -> str:
    """The section, without a trailing newline."""
    lines = [HEADER.format(all=", ".join(sorted(c.value for c in ALL)))]
    columns = ("Protocol", "Frontend", "Model list", "Stream", "Auth", "SDK (driver)", "Capabilities", "Real endpoint")
    lines.append("| " + " | ".join((*columns, "Notes")) + " |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    lines += [row(name) for name in native_protocols()]
    return "\n".join(lines)
