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
