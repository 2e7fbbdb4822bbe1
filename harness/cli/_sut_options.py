"""The `--sut` client options `run` and `fuzz` both take: the key the gateway wants, extra request headers, and
the replay server's address; and how they come back on a rerun command line without any secret."""

from __future__ import annotations

import argparse
from pathlib import Path

REPLAY_HOST = "127.0.0.1"
REPLAY_PORT = 8790


def add_sut_client_options(p: argparse.ArgumentParser) -> None:
    """Register `--replay-host`, `--replay-port`, `--client-key-env`/`--client-key`, `--sut-header(s)` and
    `--sut-unversioned`."""
    p.add_argument("--replay-host", default=REPLAY_HOST, help="--sut: replay server interface")
    p.add_argument("--replay-port", type=int, default=REPLAY_PORT, help="--sut: replay server port")
    key = p.add_mutually_exclusive_group()
    key.add_argument(
        "--client-key-env",
        metavar="VAR",
        help="--sut: send the key in environment variable VAR instead of the SDKs' placeholder key (the gateway's "
        "master key; never written to a trace or report)",
    )
    key.add_argument("--client-key", metavar="KEY", help="--sut: the same, given inline (visible to `ps`)")
    p.add_argument(
        "--sut-header",
        metavar="[BACKEND:]NAME=VALUE",
        action="append",
        default=[],
        help="--sut: an extra request header (repeatable; BACKEND: only on runs into that backend); the value may "
        "use {backend} {scenario} {replay} {upstream} {model}, filled per run",
    )
    p.add_argument(
        "--sut-unversioned",
        metavar="FRONTEND[,FRONTEND]",
        help="--sut: send these frontends' requests without the leading /v1 of their path, for a gateway whose SDK "
        "base URL is documented as its root (http://host:port, no /v1)",
    )
    p.add_argument(
        "--sut-headers",
        metavar="FILE",
        type=Path,
        help="--sut: extra headers from a TOML file ([headers], [headers.<backend>]), e.g. `sut-config --format "
        "portkey`",
    )


def sut_client_rerun(args: argparse.Namespace) -> list[str]:
    """The client options to repeat on a rerun command line (none without `--sut`): the replay address when not the
    default, and the variable or file that holds a key or headers, never a key or a header value."""
    if not args.sut:
        return []
    out: list[str] = []
    if (args.replay_host, args.replay_port) != (REPLAY_HOST, REPLAY_PORT):
        out += ["--replay-host", args.replay_host, "--replay-port", str(args.replay_port)]
    if args.client_key_env:
        out += ["--client-key-env", args.client_key_env]
    if args.sut_headers:
        out += ["--sut-headers", str(args.sut_headers)]
    if args.sut_unversioned:
        out += ["--sut-unversioned", args.sut_unversioned]
    return out
