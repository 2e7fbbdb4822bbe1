"""The planted upstream key: a fake key every upstream of the proxy under test holds, so that a proxy that shows
its key to a client (or a trace) is caught (`harness.runner.wire_checks`)."""

from __future__ import annotations

import os
import re
import secrets

from harness.protocols import registry

PLANTED_KEY_ENV = "CONFORMANCE_PLANTED_KEY"
"""Environment variable holding the upstream key the proxy is configured with (a planted, fake key)."""
CLIENT_KEY_ENV = "CONFORMANCE_CLIENT_KEY"
"""Environment variable the generated gateway configs read their client (master) key from; `conformance run
--client-key-env CONFORMANCE_CLIENT_KEY` sends the same value."""
PLANTED_PREFIX = "PLANTED-TEST-KEY-"
"""Prefix of a planted key (`harness.record.scrub` knows its shape)."""


def planted_key() -> str:
    """The planted upstream key: the environment's value, or a fresh one set there (so a proxy reads it)."""
    value = os.environ.get(PLANTED_KEY_ENV)
    if not value:
        value = PLANTED_PREFIX + secrets.token_hex(12)
        os.environ[PLANTED_KEY_ENV] = value
    return value


def planted_key_env(protocol: str) -> str:
    """The variable holding the planted key in the shape `protocol`'s `with_auth` takes (`Secrets.key_shape`, e.g.
    an access key id and the planted key as its secret, which the proxy signs with): the planted key's own
    variable when the shape is the bare key, else one beside it, set now (so a proxy reads it)."""
    shape = registry.facts(protocol).secrets.key_shape
    if shape == "{key}":
        return PLANTED_KEY_ENV
    name = f"{PLANTED_KEY_ENV}_{re.sub(r'[^A-Z0-9]', '_', protocol.upper())}"
    os.environ[name] = shape.format(key=planted_key())
    return name
