"""Serving an ASGI app from the command line with uvicorn (shared by replay-server and mock-server)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any


def add_bind_options(p: argparse.ArgumentParser, default_port: int) -> None:
    """--host (default 127.0.0.1) and --port."""
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=default_port, help=f"port to bind (default: {default_port}; 0 = any)")
    p.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"))


def serve(app: Any, args: argparse.Namespace, banner: list[str]) -> int:
    """Print what is served where, then serve until interrupted."""
    import uvicorn

    from harness.proxy.server import uvicorn_config

    for line in banner:
        print(line.format(base=f"http://{args.host}:{args.port}"), file=sys.stderr)  # noqa: T201
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(uvicorn_config(app, args.host, args.port, log_level=args.log_level)).run()
    return 0
