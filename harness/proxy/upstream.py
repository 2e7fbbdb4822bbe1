"""Talking to upstreams: the shared HTTP client, URLs, credentials, header hygiene and transport errors."""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Iterable, Mapping
from urllib.parse import urlencode

import httpx2

from harness import ir
from harness.protocols import Codec, HttpRequest, registry
from harness.proxy.config import UpstreamConfig

GENERIC_CREDENTIALS = frozenset({"authorization"})
"""The HTTP credential header of any protocol; each protocol's own are its facts (`Secrets.credentials`)."""
# Connection-level headers that belong to one hop only (RFC 9110 7.6.1) plus those httpx2 sets itself.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
# Name fragments that mark a header as secret when recording headers for the trace.
_SECRET_FRAGMENTS = ("auth", "key", "token", "secret", "cookie", "signature", "password")


class MissingKeyError(RuntimeError):
    """The configured key variable is not set; the message names the variable, never a value."""


def make_client(transport: httpx2.AsyncBaseTransport | None) -> httpx2.AsyncClient:
    """The client all upstream calls share; tests and the harness inject an in-process transport."""
    # No client-level timeout: each request carries its upstream's own (see `timeout_for`).
    return httpx2.AsyncClient(transport=transport, timeout=None, follow_redirects=False, trust_env=False)


def timeout_for(upstream: UpstreamConfig) -> httpx2.Timeout:
    """Connect and read timeouts of one upstream (writes and pool waits bounded like reads / connects)."""
    return httpx2.Timeout(
        connect=upstream.connect_timeout,
        read=upstream.read_timeout,
        write=upstream.read_timeout,
        pool=upstream.connect_timeout,
    )


def api_key(upstream: UpstreamConfig) -> str | None:
    """The upstream's key, read from its environment variable now (so rotation needs no restart)."""
    if upstream.api_key_env is None:
        return None
    value = os.environ.get(upstream.api_key_env)
    if not value:
        raise MissingKeyError(f"environment variable {upstream.api_key_env} (key of upstream {upstream.name}) is unset")
    return value


@functools.cache
def client_credentials() -> tuple[frozenset[str], frozenset[str]]:
    """The headers and query parameters any protocol's clients authenticate with (its facts), which the proxy never
    forwards: it uses its own key."""
    headers: set[str] = set(GENERIC_CREDENTIALS)
    query: set[str] = set()
    for name in registry.names():
        secrets = registry.facts(name).secrets
        headers |= secrets.credentials
        query |= secrets.credential_query
    return frozenset(headers), frozenset(query)


def without_client_credentials(request: HttpRequest) -> HttpRequest:
    """The request minus the client's own credentials and hop-by-hop headers."""
    credentials, credential_query = client_credentials()
    headers = {k: v for k, v in request.headers.items() if k not in credentials and k not in HOP_BY_HOP}
    query = {k: v for k, v in request.query.items() if k not in credential_query}
    return HttpRequest(method=request.method, path=request.path, query=query, headers=headers, body=request.body)


def authorized(codec: Codec, request: HttpRequest, upstream: UpstreamConfig) -> HttpRequest:
    """The request with the upstream's key applied the way its protocol expects (unchanged if keyless).

    The request names the host it goes to first, because a signature may cover it (SigV4 signs `host`): a
    codec signing for its provider's default host would sign for the wrong one behind any other base URL."""
    key = api_key(upstream)
    if key is None:
        return request
    host = _host(upstream.base_url)
    return codec.with_auth(dataclasses.replace(request, headers={**request.headers, "host": host}), key)


@functools.lru_cache(maxsize=256)
def _host(base_url: str) -> str:
    """The `host` header value (host, and port if any) of a base URL."""
    return httpx2.URL(base_url).netloc.decode("ascii")


def url_for(upstream: UpstreamConfig, request: HttpRequest) -> str:
    """Absolute URL of a codec request: base URL + path + query."""
    query = f"?{urlencode(request.query)}" if request.query else ""
    return f"{upstream.base_url}{request.path}{query}"


def public_url(upstream: UpstreamConfig, path: str) -> str:
    """URL without query string, safe to log and record."""
    return f"{upstream.base_url}{path}"


def build(client: httpx2.AsyncClient, upstream: UpstreamConfig, request: HttpRequest) -> httpx2.Request:
    """The httpx2 request for a codec request, with the upstream's timeouts: what `client.build_request` makes of
    it. Its headers (the client's defaults under the request's own, then Host and Content-Length) are worked out
    once for all the requests that share what they are made of, and copied (every run of a route sends the same
    headers, and merging them costs more than the rest of the request)."""
    headers = {k: v for k, v in request.headers.items() if k not in HOP_BY_HOP}
    # Ask for exactly the encoding the request named (identity when none), so bytes pass through unchanged
    # and httpx2 does not add its own Accept-Encoding.
    headers.setdefault("accept-encoding", "identity")
    text = url_for(upstream, request)
    url = _url(text)
    # What the headers are made of: the client's defaults, the request's, and what httpx2 adds from the method,
    # the URL's host and the body's length. Client cookies, query parameters or a base URL (a relative URL) make
    # a request of their own: built as httpx2 builds it.
    made_of = (tuple(client.headers.raw), tuple(headers.items()), request.method, text, len(request.body))
    shared = not (client.cookies or client.params or url.is_relative_url)
    known = _BUILT_HEADERS.get(made_of) if shared else None
    if known is None:
        timeout = timeout_for(upstream)
        built = client.build_request(request.method, url, headers=headers, content=request.body, timeout=timeout)
        if shared:
            if len(_BUILT_HEADERS) >= BUILT_HEADERS_KEPT:
                _BUILT_HEADERS.clear()
            _BUILT_HEADERS[made_of] = httpx2.Headers(built.headers)
        return built
    built = httpx2.Request(
        request.method,
        url,
        headers=known,
        stream=httpx2.ByteStream(request.body),
        extensions={"timeout": dict(_timeouts(upstream))},
    )
    built.read()
    return built


BUILT_HEADERS_KEPT = 1024
"""Distinct upstream header sets `build` keeps (a matrix run has a few hundred); past it, it starts afresh."""
_BUILT_HEADERS: dict[tuple[tuple[tuple[bytes, bytes], ...], tuple[tuple[str, str], ...], str, str, int], httpx2.Headers]
_BUILT_HEADERS = {}


@functools.lru_cache(maxsize=256)
def _timeouts(upstream: UpstreamConfig) -> dict[str, float | None]:
    """`timeout_for(upstream)` as the request extension httpx2's transports read (copy it: requests own theirs)."""
    return timeout_for(upstream).as_dict()


@functools.lru_cache(maxsize=1024)
def _url(text: str) -> httpx2.URL:
    """An upstream URL parsed (URLs are immutable, and the same few recur request after request)."""
    return httpx2.URL(text)


def safe_headers(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers fit for a trace: anything that may carry a credential is dropped by name."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    return {k.lower(): v for k, v in items if not _secret_name(k)}


@functools.lru_cache(maxsize=4096)
def _secret_name(name: str) -> bool:
    """Whether a header name may carry a credential (names repeat: each is looked at once)."""
    lowered = name.lower()
    return any(fragment in lowered for fragment in _SECRET_FRAGMENTS)


def response_headers(headers: httpx2.Headers) -> dict[str, str]:
    """Upstream response headers to pass on to the client (hop-by-hop ones dropped)."""
    return {k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP}


def error_for_exception(upstream: UpstreamConfig, exc: httpx2.HTTPError) -> ir.IRError:
    """A transport failure talking to an upstream as an IR error of kind timeout or network."""
    kind = ir.ErrorKind.TIMEOUT if isinstance(exc, httpx2.TimeoutException) else ir.ErrorKind.NETWORK
    detail = str(exc) or type(exc).__name__
    return ir.IRError.of(kind, f"upstream {upstream.name}: {type(exc).__name__}: {detail}")
