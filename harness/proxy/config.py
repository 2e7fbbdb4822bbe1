"""Proxy configuration: which frontend model names exist, how each is served, and where it goes upstream.

Frozen dataclasses, built in code by the harness or loaded from TOML by `load_config`. No model name lives in
code: every name the proxy answers to comes from the config.

TOML layout::

    [server]                       # all optional
    host = "127.0.0.1"
    port = 8787
    max_request_bytes = 33554432
    tap_max_bytes = 16777216

    [upstreams.openai-main]
    protocol = "openai"            # a registry name: a protocol or a profile (groq, deepseek, ...)
    base_url = "https://api.openai.com"
    api_key_env = "OPENAI_API_KEY" # optional: no key is sent when absent
    connect_timeout = 10.0         # optional, seconds
    read_timeout = 300.0           # optional, seconds

    [models."claude-sonnet-4-0"]
    mode = "translate"             # or "passthrough"
    upstream = "openai-main"       # a named upstream, or inline protocol/base_url/api_key_env keys
    upstream_model = "gpt-4o-mini" # optional: defaults to the frontend name
    hooks = "identity"             # optional: named translate hooks (fault-injection seam)
    listed = true                  # optional: false leaves the model out of model listings (still served)
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit

from harness.protocols import registry

Mode: TypeAlias = Literal["passthrough", "translate"]
MODES: tuple[Mode, ...] = ("passthrough", "translate")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8787
DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024
DEFAULT_TAP_MAX_BYTES = 16 * 1024 * 1024
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 300.0


class ConfigError(ValueError):
    """A config that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class UpstreamConfig:
    """One upstream service the proxy may forward to (the proxy never forwards anywhere else)."""

    name: str
    """Name the models refer to."""
    protocol: str
    """Registry name of the codec the upstream speaks (protocol or profile)."""
    base_url: str
    """Root URL the codec's request paths are appended to, e.g. `https://api.openai.com`."""
    api_key_env: str | None = None
    """Environment variable holding the key, read at request time; None sends no key."""
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    """Seconds to wait for a connection."""
    read_timeout: float = DEFAULT_READ_TIMEOUT
    """Seconds to wait between two reads of the upstream response."""


@dataclass(frozen=True)
class ModelRoute:
    """How one frontend model name is served."""

    name: str
    """Model name as clients send it."""
    mode: Mode
    """`passthrough` (bytes unchanged) or `translate` (through the IR)."""
    upstream: UpstreamConfig
    """Where requests for this model go."""
    upstream_model: str
    """Model name sent upstream."""
    hooks: str = "identity"
    """Name of the translate hooks to apply (see `harness.proxy.models.TranslateHooks`)."""
    listed: bool = True
    """Whether the model lists (`GET /v1/models` and the like) name it; an unlisted model is served all the same,
    and `GET /v1/models/{id}` still answers for it, as gateways treat their hidden aliases."""


@dataclass(frozen=True)
class ProxyConfig:
    """The whole proxy configuration."""

    models: tuple[ModelRoute, ...]
    """Every frontend model name the proxy serves."""
    host: str = DEFAULT_HOST
    """Interface `conformance serve` binds to by default."""
    port: int = DEFAULT_PORT
    """Port `conformance serve` binds to by default."""
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    """Larger request bodies are refused with 413."""
    tap_max_bytes: int = DEFAULT_TAP_MAX_BYTES
    """Raw bytes kept per direction per exchange for the tap; beyond it the exchange is marked truncated."""
    source: str = "<code>"
    """Where the config came from (file path), for messages and diagnostics."""
    _by_name: Mapping[str, ModelRoute] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name: dict[str, ModelRoute] = {}
        for route in self.models:
            if route.name in by_name:
                raise ConfigError(f"{self.source}: models.{route.name}: defined twice")
            by_name[route.name] = route
        object.__setattr__(self, "_by_name", by_name)

    def route(self, model: str) -> ModelRoute | None:
        """The route of a frontend model name (a Gemini `models/` prefix is ignored), or None."""
        return self._by_name.get(model.removeprefix("models/"))

    @property
    def upstreams(self) -> tuple[UpstreamConfig, ...]:
        """The distinct upstreams the models use, in first-use order."""
        seen: dict[str, UpstreamConfig] = {}
        for route in self.models:
            seen.setdefault(route.upstream.name, route.upstream)
        return tuple(seen.values())


def load_config(path: str | Path) -> ProxyConfig:
    """Read and validate a TOML config; every problem raises `ConfigError("<file>: <key>: <problem>")`."""
    p = Path(path)
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 at byte {exc.start}") from exc
    return config_from_dict(doc, source=str(p))


def config_from_dict(doc: Mapping[str, Any], *, source: str = "<code>") -> ProxyConfig:
    """Validate a parsed config document (the TOML shape above)."""
    reader = _Reader(source)
    reader.only_keys(doc, "", {"server", "upstreams", "models"})
    server = reader.table(doc, "server", required=False)
    reader.only_keys(server, "server", {"host", "port", "max_request_bytes", "tap_max_bytes"})
    upstreams = {
        name: reader.upstream(name, table, f"upstreams.{name}")
        for name, table in reader.table(doc, "upstreams", required=False).items()
    }
    models_table = reader.table(doc, "models", required=True)
    if not models_table:
        raise ConfigError(f"{source}: models: at least one model is required")
    models = tuple(reader.model(name, table, upstreams) for name, table in models_table.items())
    port = reader.integer(server, "port", "server", DEFAULT_PORT, low=0, high=65535)
    return ProxyConfig(
        models=models,
        host=reader.string(server, "host", "server", DEFAULT_HOST),
        port=port,
        max_request_bytes=reader.integer(server, "max_request_bytes", "server", DEFAULT_MAX_REQUEST_BYTES, low=1),
        tap_max_bytes=reader.integer(server, "tap_max_bytes", "server", DEFAULT_TAP_MAX_BYTES, low=0),
        source=source,
    )


def suggest(name: str, known: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the nearest of `known`, or nothing."""
    near = difflib.get_close_matches(name, sorted(known), n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


_UPSTREAM_KEYS = {"protocol", "base_url", "api_key_env", "connect_timeout", "read_timeout"}
_MODEL_KEYS = {"mode", "upstream", "upstream_model", "hooks", "listed"}


class _Reader:
    """Typed access to a config document; every failure names the source and the dotted key."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.source}: {key}: {problem}")

    def only_keys(self, table: Mapping[str, Any], where: str, allowed: set[str]) -> None:
        for key in table:
            if key not in allowed:
                dotted = f"{where}.{key}" if where else key
                raise self.fail(dotted, f"unknown key (allowed: {', '.join(sorted(allowed))})")

    def table(self, doc: Mapping[str, Any], key: str, *, required: bool) -> dict[str, Any]:
        value = doc.get(key)
        if value is None:
            if required:
                raise self.fail(key, "missing table")
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table, got {type(value).__name__}")
        return value

    def string(self, table: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str:
        value = table.get(key, default)
        if not isinstance(value, str) or not value:
            problem = "missing" if key not in table else f"expected a non-empty string, got {value!r}"
            raise self.fail(f"{where}.{key}", problem)
        return value

    def boolean(self, table: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
        value = table.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(f"{where}.{key}", f"expected true or false, got {value!r}")
        return value

    def integer(
        self, table: Mapping[str, Any], key: str, where: str, default: int, *, low: int, high: int | None = None
    ) -> int:
        value = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"{where}.{key}", f"expected an integer, got {value!r}")
        if value < low or (high is not None and value > high):
            raise self.fail(f"{where}.{key}", f"{value} is out of range")
        return value

    def seconds(self, table: Mapping[str, Any], key: str, where: str, default: float) -> float:
        value = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise self.fail(f"{where}.{key}", f"expected a positive number of seconds, got {value!r}")
        return float(value)

    def upstream(self, name: str, table: Any, where: str) -> UpstreamConfig:
        if not isinstance(table, dict):
            raise self.fail(where, f"expected a table, got {type(table).__name__}")
        self.only_keys(table, where, _UPSTREAM_KEYS)
        base_url = self.string(table, "base_url", where)
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise self.fail(f"{where}.base_url", f"expected an http(s) URL, got {base_url!r}")
        api_key_env = table.get("api_key_env")
        if api_key_env is not None:
            api_key_env = self.string(table, "api_key_env", where)
        protocol = self.string(table, "protocol", where)
        try:
            registry.get(protocol)
        except registry.UnknownProtocolError as exc:
            raise self.fail(f"{where}.protocol", str(exc)) from None
        return UpstreamConfig(
            name=name,
            protocol=protocol,
            base_url=base_url.rstrip("/"),
            api_key_env=api_key_env,
            connect_timeout=self.seconds(table, "connect_timeout", where, DEFAULT_CONNECT_TIMEOUT),
            read_timeout=self.seconds(table, "read_timeout", where, DEFAULT_READ_TIMEOUT),
        )

    def model(self, name: str, table: Any, upstreams: Mapping[str, UpstreamConfig]) -> ModelRoute:
        where = f"models.{name}"
        if not isinstance(table, dict):
            raise self.fail(where, f"expected a table, got {type(table).__name__}")
        inline = {k: v for k, v in table.items() if k in _UPSTREAM_KEYS}
        self.only_keys(table, where, _MODEL_KEYS | _UPSTREAM_KEYS)
        mode = self.string(table, "mode", where)
        if mode not in MODES:
            raise self.fail(f"{where}.mode", f"expected one of {', '.join(MODES)}, got {mode!r}")
        if "upstream" in table:
            if inline:
                raise self.fail(where, f"give either 'upstream' or inline {', '.join(sorted(inline))}, not both")
            ref = self.string(table, "upstream", where)
            if ref not in upstreams:
                known = ", ".join(sorted(upstreams)) or "(none)"
                raise self.fail(
                    f"{where}.upstream", f"no upstream named {ref!r}{suggest(ref, upstreams)}; known: {known}"
                )
            upstream = upstreams[ref]
        else:
            # An inline upstream is named after its model so diagnostics can still tell upstreams apart.
            upstream = self.upstream(f"model:{name}", inline, where)
        return ModelRoute(
            name=name,
            mode="passthrough" if mode == "passthrough" else "translate",
            upstream=upstream,
            upstream_model=self.string(table, "upstream_model", where, name),
            hooks=self.string(table, "hooks", where, "identity"),
            listed=self.boolean(table, "listed", where, True),
        )
