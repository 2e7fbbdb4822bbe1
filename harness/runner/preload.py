"""Imported by the worker processes' fork server before it forks them: the engine and every SDK driver, so that
each worker starts with its imports done (two seconds of CPU a worker otherwise)."""

from harness import drivers
from harness.runner import engine, workers

for _name in drivers.names():
    drivers.get(_name)

__all__ = ["engine", "workers"]
