"""The rig of a matrix run: the proxy wired to replayed backends (in-process or on a loopback socket), the
sync/async bridge the SDK clients cross, an external system under test with its replay server, the HTTP client
each SDK needs, and the planted upstream key."""

from harness.rig.environment import RUN_HEADER, Environment, ExchangeSink, proxy_config
from harness.rig.keys import PLANTED_KEY_ENV, planted_key
from harness.rig.routes import RouteSpec, route_table, upstream_models
from harness.rig.sut import Session, SetupError, SutTarget, preflight
from harness.rig.sut_client import SutClient, SutHeader

__all__ = [
    "PLANTED_KEY_ENV",
    "RUN_HEADER",
    "Environment",
    "ExchangeSink",
    "RouteSpec",
    "Session",
    "SetupError",
    "SutClient",
    "SutHeader",
    "SutTarget",
    "planted_key",
    "preflight",
    "proxy_config",
    "route_table",
    "upstream_models",
]
