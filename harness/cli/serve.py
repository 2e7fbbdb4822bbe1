"""`conformance serve`: run the built-in proxy under test on a socket with uvicorn."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from harness.cli._serving import BindError, bind, port_number, run_server

LOG_LEVELS = ("debug", "info", "warning", "error")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "serve",
        help="serve the built-in proxy (pass-through and translate modes) from a TOML config",
        description=(
            "Serve the proxy under test with uvicorn. It answers only for the models in the config and forwards "
            "only to the upstreams named there. Binds 127.0.0.1 unless --host (or the config's [server] host) "
            "says otherwise. Keys are read from the environment variables the config names, at request time."
        ),
    )
    p.add_argument("--config", required=True, type=Path, help="proxy config (TOML)")
    p.add_argument("--host", default=None, help="interface to bind (default: config, else 127.0.0.1)")
    p.add_argument("--port", type=port_number, default=None, help="port to bind (default: config, else 8787)")
    p.add_argument("--log-level", default="info", choices=LOG_LEVELS, help="log level (default: info)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load the config and serve until interrupted; exit 2 with a message naming the key on a bad config."""
    # Imported here so that `conformance --help` does not pay for starlette and uvicorn.
    from harness.cli._proxy_banner import AnnouncingServer, banner
    from harness.faults import catalog_hooks
    from harness.proxy import ConfigError, create_app, load_config
    from harness.proxy.server import uvicorn_config

    try:
        config = load_config(args.config)
        # A model may switch on a catalogued fault by name (`hooks = "<fault>"`): how selftest gates an external run.
        app = create_app(config, hooks=catalog_hooks())
    except ConfigError as exc:
        print(f"conformance serve: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    host = args.host or config.host
    port = config.port if args.port is None else args.port
    level = getattr(logging, args.log_level.upper())
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # httpx2 logs every request URL at INFO; the proxy logs each exchange itself (with its trace id).
    logging.getLogger("httpx2").setLevel(max(level, logging.WARNING))
    try:
        sock = bind(host, port)
    except BindError as exc:
        print(f"conformance serve: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    port = sock.getsockname()[1]
    run_server(AnnouncingServer(uvicorn_config(app, host, port, log_level=args.log_level), banner(config)), sock)
    return 0
