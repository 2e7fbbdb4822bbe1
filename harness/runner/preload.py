"""Imported by the worker processes' fork server before it forks them: the engine and every SDK driver, so that
each worker starts with its imports done (two seconds of CPU a worker otherwise)."""

import signal

# Ctrl-C reaches the whole foreground process group: the parent answers it (one line, exit 130) and stops its
# workers; a worker that took it too would print a traceback each. Forked workers inherit this disposition. It is
# set before the imports: the fork server shields itself from SIGINT only once its preload is done, and a Ctrl-C
# during these seconds of imports (longer on a loaded machine) ended it in a KeyboardInterrupt traceback.
signal.signal(signal.SIGINT, signal.SIG_IGN)

from harness import drivers  # noqa: E402 -- after the signal disposition, on purpose
from harness.runner import engine, workers  # noqa: E402

for _name in drivers.names():
    drivers.get(_name)

__all__ = ["engine", "workers"]
