"""Serving an ASGI app from the command line with uvicorn (shared by serve, replay-server and mock-server): the
socket is bound here first, so a bad or busy port is one line and exit 2, never uvicorn's startup failure."""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
from typing import Any

EXIT_SETUP = 2


class BindError(OSError):
    """The address cannot be listened on (in use, not allowed, unknown host); the message is one line."""


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free port) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is out of range (0-65535)")
    return value


def add_bind_options(p: argparse.ArgumentParser, default_port: int) -> None:
    """--host (default 127.0.0.1) and --port."""
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)")
    p.add_argument(
        "--port", type=port_number, default=default_port, help=f"port to bind (default: {default_port}; 0 = any)"
    )
    p.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"))


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port, or `BindError` saying why in one line."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise BindError(f"cannot resolve host {host!r}: {exc.strerror}") from exc
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise BindError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.setblocking(False)
    return sock


def run_server(server: Any, sock: socket.socket) -> None:
    """Serve on an already bound socket until interrupted (uvicorn shuts down gracefully on Ctrl-C and re-raises
    it: that is a normal end of serving)."""
    try:
        with contextlib.suppress(KeyboardInterrupt):
            server.run(sockets=[sock])
    finally:
        sock.close()


def serve(app: Any, args: argparse.Namespace, banner: list[str]) -> int:
    """Print what is served where, then serve until interrupted; a port that cannot be bound exits 2."""
    import uvicorn

    from harness.cli import say_error
    from harness.proxy.server import uvicorn_config

    try:
        sock = bind(args.host, args.port)
    except BindError as exc:
        say_error(args.command, exc)
        return EXIT_SETUP
    port = sock.getsockname()[1]
    for line in banner:
        print(line.format(base=f"http://{args.host}:{port}"), file=sys.stderr)  # noqa: T201
    run_server(uvicorn.Server(uvicorn_config(app, args.host, port, log_level=args.log_level)), sock)
    return 0
