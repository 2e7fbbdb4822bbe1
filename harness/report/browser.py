"""Drive headless Chromium over its DevTools pipe (`--remote-debugging-pipe`: NUL-separated JSON on fds 3 and 4),
with no third-party client: open a report page, wait for its script to finish, evaluate expressions in it, and
see every URL it requested. The browser tests and `bench/bench_report.py` use it; nothing at run time does.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-pipe",
)
"""Chromium flags: headless, nothing fetched in the background, DevTools over the pipe."""


class BrowserError(RuntimeError):
    """Chromium is missing, died, answered with an error, or a wait ran out."""


def chromium() -> str | None:
    """Path of the Chromium binary, if installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _onto_3_and_4(read: int, write: int) -> None:
    """In the child before exec: the command pipe's read end on fd 3, the answer pipe's write end on fd 4."""
    # Copied above 4 first, so that neither dup2 overwrites the other pipe's end.
    high_read, high_write = fcntl.fcntl(read, fcntl.F_DUPFD, 10), fcntl.fcntl(write, fcntl.F_DUPFD, 10)
    os.dup2(high_read, 3)
    os.dup2(high_write, 4)


class Browser:
    """One headless Chromium with one page; use as a context manager (the process is stopped on exit)."""

    def __init__(self, timeout: float = 60.0) -> None:
        """Start Chromium (BrowserError when it is not installed); `timeout` bounds every wait."""
        binary = chromium()
        if binary is None:
            raise BrowserError("chromium is not installed")
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="report-browser-")
        to_child, self._write = os.pipe()
        self._read, from_child = os.pipe()
        # Chromium reads commands on fd 3 and writes answers on fd 4.
        self._proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=lambda: _onto_3_and_4(to_child, from_child),
        )
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        """Every DevTools event received so far (method and params)."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable", session=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop Chromium (only the process this object started) and remove its profile."""
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=10)
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):  # already closed: nothing left to release
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise BrowserError("no answer from chromium in time")
            data = os.read(self._read, 1 << 20)
            if not data:
                raise BrowserError("chromium closed its DevTools pipe")
            self._buffer += data
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(self, method: str, *, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and return its result (events that arrive meanwhile are kept)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._message(deadline)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            if "method" in answer:
                self.events.append(answer)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited when it is a promise)."""
        result = self.call(
            "Runtime.evaluate", session=True, expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:80]}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def wait_for(self, expression: str, poll: float = 0.02) -> Any:
        """Poll until the expression is truthy in the page; returns its value (a DOM node, which does not cross
        the pipe by value, returns True)."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            value = self.evaluate(f"(v => (v instanceof Node) || v)({expression})")
            if value:
                return value
            time.sleep(poll)
        raise BrowserError(f"timed out waiting for {expression[:80]}")

    def open(self, page: Path, fragment: str = "") -> float:
        """Load `page` (a file) with `#fragment`, wait until its script marks the body ready, and return the
        milliseconds from navigation start to ready (the page's own clock)."""
        url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
        # Through a blank page: a new fragment alone would not reload the page, and the old document would
        # answer the readiness check before the new one exists.
        self.call("Page.navigate", session=True, url="about:blank")
        self.wait_for("location.href === 'about:blank' && document.readyState === 'complete'")
        self.call("Page.navigate", session=True, url=url)
        ready = self.wait_for(
            f"location.href === {json.dumps(url)} && document.readyState === 'complete' && document.body"
            " && document.body.dataset.ready === 'true'"
            " && (Number(document.body.dataset.readyMs) || performance.now())"
        )
        return float(ready)

    def requested(self) -> list[str]:
        """Every URL the page asked for so far (from the Network domain's events)."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]
