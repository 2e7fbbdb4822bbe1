"""The proxy under test: an ASGI app with pass-through and translate modes, config-driven model routing and a
trace tap. Reaches protocols only through `harness.protocols.registry`."""

from harness.proxy.app import create_app, state_of
from harness.proxy.asgi import StreamingASGITransport
from harness.proxy.config import ConfigError, ModelRoute, ProxyConfig, UpstreamConfig, config_from_dict, load_config
from harness.proxy.models import IDENTITY_HOOKS, Exchange, ExchangeCallback, HookContext, Timings, TranslateHooks
from harness.proxy.server import ServerThread
from harness.proxy.tap import TRACE_HEADER
from harness.proxy.upstream import safe_headers

__all__ = [
    "IDENTITY_HOOKS",
    "TRACE_HEADER",
    "ConfigError",
    "Exchange",
    "ExchangeCallback",
    "HookContext",
    "ModelRoute",
    "ProxyConfig",
    "ServerThread",
    "StreamingASGITransport",
    "Timings",
    "TranslateHooks",
    "UpstreamConfig",
    "config_from_dict",
    "create_app",
    "load_config",
    "safe_headers",
    "state_of",
]
