"""Keeping keys out of logs: a filter on the proxy's, httpx2's and uvicorn's loggers that scrubs them.

The proxy never formats a key into a message itself; this filter is the second line of defence for text it
does not control (httpx2 logs request URLs, which for some protocols may carry `key=`).
"""

from __future__ import annotations

import logging
import os
import re
import threading

LOGGERS = ("harness.proxy", "httpx2", "uvicorn.error", "uvicorn.access")
_QUERY_KEY = re.compile(r"([?&](?:key|api[-_]?key|access_token)=)[^&\s\"']+", re.IGNORECASE)
REDACTED = "[REDACTED]"


class SecretFilter(logging.Filter):
    """Replaces key-looking query values and the current values of watched key variables in log records."""

    def __init__(self) -> None:
        super().__init__()
        self._env_names: set[str] = set()
        self._lock = threading.Lock()

    def watch(self, env_names: set[str]) -> None:
        """Also scrub the values of these environment variables (read when each record is logged)."""
        with self._lock:
            self._env_names |= env_names

    def scrub(self, text: str) -> str:
        """The text with every known secret replaced."""
        text = _QUERY_KEY.sub(rf"\1{REDACTED}", text)
        with self._lock:
            names = list(self._env_names)
        for name in names:
            value = os.environ.get(name)
            # Very short values would blank out ordinary words; real keys are long.
            if value and len(value) >= 8:
                text = text.replace(value, REDACTED)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = self.scrub(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


_FILTER = SecretFilter()
_installed = False


def install(env_names: set[str]) -> SecretFilter:
    """Attach the one process-wide filter to the loggers (once) and watch these key variables."""
    global _installed
    _FILTER.watch(env_names)
    if not _installed:
        for name in LOGGERS:
            logging.getLogger(name).addFilter(_FILTER)
        _installed = True
    return _FILTER
