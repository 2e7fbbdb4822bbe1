"""A stand-in gateway process for the launcher tests: an HTTP server on 127.0.0.1.

    python fake_gateway.py PORT [--delay S] [--status N] [--exit-after S] [--ignore-term]

Answers every GET with `--status` (after `--delay` seconds of not listening yet), exits on its own after
`--exit-after` seconds, and with `--ignore-term` survives SIGTERM (so only SIGKILL stops it). Prints one line to
its log when it listens.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--status", type=int, default=200)
    parser.add_argument("--exit-after", type=float)
    parser.add_argument("--ignore-term", action="store_true")
    args = parser.parse_args()
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.exit_after is not None:
        print("fake gateway failing on purpose", flush=True)  # noqa: T201
        time.sleep(args.exit_after)
        sys.exit(3)
    time.sleep(args.delay)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(args.status)
            self.end_headers()
            self.wfile.write(b"fake")

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"listening on 127.0.0.1:{args.port}", flush=True)  # noqa: T201
    threading.Thread(target=server.serve_forever, daemon=True).start()
    while True:
        time.sleep(0.1)


if __name__ == "__main__":
    main()
