"""Serving the proxy on a loopback socket with uvicorn, in a background thread (tests, benchmarks, harness)."""

from __future__ import annotations

import threading
import time
from types import TracebackType

import uvicorn
from starlette.types import ASGIApp

STARTUP_SECONDS = 10.0
SHUTDOWN_SECONDS = 10.0


def uvicorn_config(app: ASGIApp, host: str, port: int, *, log_level: str = "warning") -> uvicorn.Config:
    """The uvicorn settings the proxy always runs with: no access log (URLs may carry `key=`), h11."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        http="h11",
        timeout_graceful_shutdown=5,
    )


class ServerThread:
    """uvicorn serving an app on host:port (0 = a free port) in a daemon thread; a context manager.

    Every wait is bounded: startup fails after `STARTUP_SECONDS`, shutdown gives up after `SHUTDOWN_SECONDS`.
    """

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0) -> None:
        self.server = uvicorn.Server(uvicorn_config(app, host, port))
        self.host = host
        self.port = port
        self._thread = threading.Thread(target=self.server.run, name="proxy-uvicorn", daemon=True)

    @property
    def url(self) -> str:
        """Base URL of the running server."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        """Start serving; returns once the socket accepts connections."""
        self._thread.start()
        deadline = time.monotonic() + STARTUP_SECONDS
        while not self.server.started:
            if not self._thread.is_alive():
                raise RuntimeError("uvicorn exited during startup")
            if time.monotonic() > deadline:
                self.server.should_exit = True
                raise TimeoutError(f"uvicorn did not start within {STARTUP_SECONDS} s")
            time.sleep(0.01)
        sockets = [s for server in self.server.servers for s in server.sockets]
        self.port = int(sockets[0].getsockname()[1])
        return self

    def stop(self) -> None:
        """Ask the server to exit and wait (bounded) for the thread."""
        self.server.should_exit = True
        self._thread.join(SHUTDOWN_SECONDS)
        if self._thread.is_alive():
            self.server.force_exit = True
            self._thread.join(SHUTDOWN_SECONDS)

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
