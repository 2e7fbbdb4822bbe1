"""Imported by the worker processes' fork server before it forks them: the engine and every SDK driver, so that
each worker starts with its imports done (two seconds of CPU a worker otherwise)."""

import signal

from harness import drivers
from harness.runner import engine, workers

for _name in drivers.names():
    drivers.get(_name)

# Ctrl-C reaches the whole foreground process group: the parent answers it (one line, exit 130) and stops its
# workers; a worker that took it too would print a traceback each. Forked workers inherit this disposition.
signal.signal(signal.SIGINT, signal.SIG_IGN)

__all__ = ["engine", "workers"]
