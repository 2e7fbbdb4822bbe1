"""The plumbing of a matrix run: the proxy wired to replayed backends (in-process or on a loopback socket), the
sync/async bridge the SDK clients cross, an external system under test with its replay server, the HTTP client
each SDK needs, and the planted upstream key."""

from harness.plumbing.environment import RUN_HEADER, Environment, ExchangeSink, proxy_config
from harness.plumbing.keys import PLANTED_KEY_ENV, planted_key
from harness.plumbing.routes import RouteSpec, route_table
from harness.plumbing.sut import Session, SetupError, SutTarget, preflight

__all__ = [
    "PLANTED_KEY_ENV",
    "RUN_HEADER",
    "Environment",
    "ExchangeSink",
    "RouteSpec",
    "Session",
    "SetupError",
    "SutTarget",
    "planted_key",
    "preflight",
    "proxy_config",
    "route_table",
]
