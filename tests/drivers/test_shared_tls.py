"""One TLS context per process for the SDK clients: google-genai builds two per client unless given one, and
loading the trust store costs more than a whole replayed call."""

from __future__ import annotations

import ssl
from unittest import mock

import httpx2

from harness.drivers import genai_sdk
from harness.drivers.base import shared_tls_context


def test_a_genai_client_loads_no_trust_store_of_its_own() -> None:
    shared_tls_context()
    http = httpx2.Client(transport=httpx2.MockTransport(lambda request: httpx2.Response(200)))
    loads = mock.Mock(side_effect=ssl.SSLContext.load_verify_locations, autospec=True)
    with mock.patch.object(ssl.SSLContext, "load_verify_locations", loads):
        genai_sdk.DRIVER.client("http://proxy.local", http)
        genai_sdk.DRIVER.client("http://proxy.local", http)
    assert loads.call_count == 0
    assert shared_tls_context() is shared_tls_context()
    assert shared_tls_context().verify_mode == ssl.CERT_REQUIRED  # the SDK's default context, not a lax one


def test_a_genai_client_builds_no_async_client_of_its_own() -> None:
    # google-genai builds an httpx2.AsyncClient per client unless given one; the driver calls the sync API only,
    # so every client of the process gets the same idle one (and never sends through it).
    genai_sdk.idle_async_client()
    http = httpx2.Client(transport=httpx2.MockTransport(lambda request: httpx2.Response(200)))
    built = mock.Mock(side_effect=httpx2.AsyncClient.__init__, autospec=True)
    with mock.patch.object(httpx2.AsyncClient, "__init__", built):
        genai_sdk.DRIVER.client("http://proxy.local", http)
        genai_sdk.DRIVER.client("http://proxy.local", http)
    assert built.call_count == 0
    assert genai_sdk.idle_async_client() is genai_sdk.idle_async_client()
