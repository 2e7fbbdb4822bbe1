"""Imported by the worker processes' fork server before it forks them: the engine and every SDK driver, so that
each worker starts with its imports done (two seconds of CPU a worker otherwise). What they made is then moved out
of the cyclic collector's reach (`gc.freeze`, as CPython's docs advise before a fork without exec): the ~300,000
objects of the imported SDKs live as long as the process, and each worker's full collections traversed them all
again (a worker makes about 7 in a main job), writing to their pages and so copying them from the fork server's.
Freezing them cut the workers' full-collection CPU by about a third (docs/ci.md)."""

import gc
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

gc.freeze()  # last: everything the imports made, nothing a worker makes
