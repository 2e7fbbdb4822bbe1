"""How the SDKs reach an external system under test besides its URL: the client key it wants and the extra headers
it reads per request (`conformance run --client-key-env`, `--sut-header`, `--sut-headers`).

Real gateways need both. LiteLLM refuses to start without a master key and then wants it from every client;
claude-code-router wants its `APIKEY`; Portkey picks each request's upstream from headers (`x-portkey-config`),
so their values depend on the run: `{backend}`, `{scenario}`, `{replay}` (the replay server's root URL),
`{upstream}` (the run's upstream base URL, `{replay}/{backend}/_s/{scenario}`) and `{model}` (the realistic
upstream model) are filled in for each run. Only these placeholders are replaced, so a JSON value keeps its
braces.

The client key replaces the placeholder key the SDK drivers send, wherever it appears in a request header; it is
never written to a trace (the runner redacts it).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import httpx2

from harness.protocols import registry
from harness.scenarios.resolve import scenario_path

PLACEHOLDERS = ("{backend}", "{scenario}", "{replay}", "{upstream}", "{model}")
"""The placeholders a header value may use."""
URL_PLACEHOLDERS = ("{frontend}", "{backend}", "{scenario}")
"""The placeholders a `--sut` URL may use, filled per run: a gateway that serves each client protocol, upstream or
route under a path of its own (`http://127.0.0.1:4000/{backend}/{frontend}`)."""
REDACTED_CLIENT_KEY = "[REDACTED: client key]"
"""What replaces the client key in anything the harness writes."""


class SutClientError(ValueError):
    """A header option or headers file that cannot be used; names the option or the file and the key."""


@dataclass(frozen=True)
class SutHeader:
    """One extra request header for the system under test."""

    name: str
    """Header name (lower case)."""
    value: str
    """Its value, with placeholders (`PLACEHOLDERS`)."""
    backend: str | None = None
    """Only for runs into this backend (None: every run)."""


@dataclass(frozen=True)
class RunAddress:
    """What the placeholders of one run stand for."""

    backend: str
    """The run's backend."""
    scenario: str
    """The run's scenario."""
    replay: str
    """The replay server's root URL."""
    model: str
    """The realistic model the run's route sends upstream."""

    @property
    def upstream(self) -> str:
        """The run's upstream base URL on the replay server."""
        return f"{self.replay.rstrip('/')}/{self.backend}{scenario_path(self.scenario)}"

    def fill(self, template: str) -> str:
        """`template` with every placeholder replaced."""
        values = {
            "{backend}": self.backend,
            "{scenario}": self.scenario,
            "{replay}": self.replay.rstrip("/"),
            "{upstream}": self.upstream,
            "{model}": self.model,
        }
        for placeholder, value in values.items():
            template = template.replace(placeholder, value)
        return template


@dataclass(frozen=True)
class SutClient:
    """The client key and extra headers of every translated run sent to the system under test."""

    key: str | None = field(default=None, repr=False)
    """The key the SDKs send instead of their placeholder (None: the placeholder goes as it is)."""
    headers: tuple[SutHeader, ...] = ()
    """Extra headers, in order (a later one with the same name wins)."""
    placeholder_key: str = ""
    """The key the SDK drivers send (the runner sets it); the client key replaces it."""
    unversioned: frozenset[str] = frozenset()
    """Frontends whose SDK requests reach the system under test without the leading `/v1` of their path: a gateway
    documented with `OPENAI_BASE_URL=http://host:port` serves `/responses`, not `/v1/responses`."""

    def headers_for(self, address: RunAddress) -> dict[str, str]:
        """The extra headers of one run, placeholders filled."""
        return {
            h.name: address.fill(h.value) for h in self.headers if h.backend is None or h.backend == address.backend
        }

    def redact(self, text: str) -> str:
        """`text` without the client key."""
        return text.replace(self.key, REDACTED_CLIENT_KEY) if self.key else text


def parse_header(option: str) -> SutHeader:
    """`[BACKEND:]NAME=VALUE` (a `--sut-header` option) as a header; a malformed one raises SutClientError."""
    head, sep, value = option.partition("=")
    backend, colon, name = head.rpartition(":") if ":" in head else ("", "", head)
    name = name.strip().lower()
    if not sep or not name or any(c.isspace() for c in name) or (colon and not backend.strip()):
        raise SutClientError(f"--sut-header {option!r}: expected [BACKEND:]NAME=VALUE")
    return SutHeader(name, value, backend.strip() or None)


def load_headers(path: Path) -> tuple[SutHeader, ...]:
    """The headers of a headers file (TOML: `[headers]` for every run, `[headers.<backend>]` for one backend's
    runs), as `conformance sut-config --format portkey` writes it."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SutClientError(f"{path}: {exc}") from exc
    unknown = sorted(set(doc) - {"headers"})
    if unknown:
        raise SutClientError(f"{path}: unknown keys {unknown} (allowed: headers)")
    table = doc.get("headers", {})
    if not isinstance(table, dict):
        raise SutClientError(f"{path}: headers: expected a table")
    out: list[SutHeader] = []
    for key, value in table.items():
        if isinstance(value, str):
            out.append(SutHeader(key.lower(), value))
        elif isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            out += [SutHeader(name.lower(), v, key) for name, v in value.items()]
        else:
            raise SutClientError(f"{path}: headers.{key}: expected a string or a table of strings")
    return tuple(out)


VERSION = "/v1"
"""The path segment `--sut-unversioned` takes out of a frontend's requests."""


def parse_unversioned(option: str) -> frozenset[str]:
    """`FRONTEND[,FRONTEND...]` (a `--sut-unversioned` option) as frontend names; one that is not a registered
    protocol raises SutClientError."""
    names = frozenset(n.strip() for n in option.split(",") if n.strip())
    unknown = sorted(n for n in names if n not in registry.names())
    if not names or unknown:
        raise SutClientError(f"--sut-unversioned {option!r}: not frontend protocols: {', '.join(unknown) or '(none)'}")
    return names


class UnversionedTransport(httpx2.BaseTransport):
    """A sync transport that sends each request without the `/v1` that follows the `--sut` URL's own path
    (`<root>/v1/responses` goes out as `<root>/responses`); a request whose path has none goes as it is."""

    def __init__(self, inner: httpx2.BaseTransport, root_path: str) -> None:
        self.inner = inner
        self.root = root_path.rstrip("/")

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Rewrite the path, then send through the inner transport."""
        versioned = f"{self.root}{VERSION}/"
        if request.url.path.startswith(versioned):
            rest = request.url.path[len(versioned) :]
            request.url = request.url.copy_with(path=f"{self.root}/{rest}")
        return self.inner.handle_request(request)

    def close(self) -> None:
        """Close the inner transport (its connections)."""
        self.inner.close()


def sut_url(template: str, frontend: str, backend: str, scenario: str) -> str:
    """The `--sut` URL of one run: `template` with `URL_PLACEHOLDERS` filled."""
    for placeholder, value in zip(URL_PLACEHOLDERS, (frontend, backend, scenario), strict=True):
        template = template.replace(placeholder, value)
    return template


def sut_root(template: str) -> str:
    """Where a `--sut` URL with placeholders answers for every run: the part before the first one."""
    return template.split("{", 1)[0]


def check_sut_url(template: str) -> None:
    """SutClientError when a `--sut` URL holds a brace that is not one of `URL_PLACEHOLDERS`."""
    rest = sut_url(template, "", "", "")
    if "{" in rest or "}" in rest:
        known = " ".join(URL_PLACEHOLDERS)
        raise SutClientError(f"--sut {template}: a placeholder it cannot fill (a --sut URL may use {known})")


def scoped_to(client: SutClient | None, backends: Sequence[str]) -> SutClient | None:
    """The client without the headers scoped to other upstreams: a headers file written for a whole gate
    (`sut-config --format portkey`) names them all, and one fuzzed pair's runs talk to some. A header scoped to no
    protocol at all is kept, so that `check_backends` refuses it as a typo."""
    if client is None:
        return None
    others = set(registry.names()) - set(backends)
    return replace(client, headers=tuple(h for h in client.headers if h.backend not in others))


def check_backends(client: SutClient, backends: Sequence[str]) -> None:
    """Refuse a header scoped to a backend the run does not have (a typo would silently send nothing)."""
    unknown = sorted({h.backend for h in client.headers if h.backend is not None} - set(backends))
    if unknown:
        raise SutClientError(f"headers given for {', '.join(unknown)}, which is not a backend of this run")


class ClientKeyTransport(httpx2.BaseTransport):
    """A sync transport that puts the client key where the SDK put its placeholder key, and sets extra headers."""

    def __init__(self, inner: httpx2.BaseTransport, client: SutClient, headers: Mapping[str, str]) -> None:
        self.inner = inner
        self.client = client
        self.headers = dict(headers)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Swap the key, add the headers, and send through the inner transport."""
        key, placeholder = self.client.key, self.client.placeholder_key
        if key:
            swapped = False
            if placeholder:
                for name, value in list(request.headers.items()):
                    if placeholder in value:
                        request.headers[name] = value.replace(placeholder, key)
                        swapped = True
            if not swapped:  # an SDK that sends no key at all (a local server's client)
                request.headers["authorization"] = f"Bearer {key}"
        request.headers.update(self.headers)
        return self.inner.handle_request(request)

    def close(self) -> None:
        """Close the inner transport (its connections)."""
        self.inner.close()
