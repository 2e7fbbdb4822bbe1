"""Shared timing for the benchmarks: interleaved best-of-N rounds, so background load hits every contender alike."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """The fastest timed run of one contender and what that run returned (a count, to check equal work)."""

    best_ns: int
    """Fastest run by the wall clock (`perf_counter_ns`), in nanoseconds."""
    cpu_ns: int
    """Least CPU time (`thread_time_ns`) of any run: unaffected by time spent descheduled on a loaded machine."""
    result: int
    """Return value of the last run (events, chunks or bytes handled)."""

    @property
    def seconds(self) -> float:
        """The fastest run in seconds."""
        return self.best_ns / 1e9

    def per(self, count: int, *, cpu: bool = False) -> float:
        """Microseconds per item for `count` items handled in the fastest run (by wall clock, or CPU time)."""
        return (self.cpu_ns if cpu else self.best_ns) / 1e3 / count


def interleaved_best(runs: Mapping[str, Callable[[], int]], *, rounds: int, warmup: int = 0) -> dict[str, Timing]:
    """Best of `rounds` timed runs of each callable, after `warmup` untimed rounds.

    Rounds are interleaved (every contender once per round) rather than run back to back, so a burst of load
    from another process slows all contenders in the same round instead of one of them; the minimum is the
    figure least disturbed by preemption, which matters on a shared 2-core machine. CPU time is kept too: when
    the machine is busy, every wall-clock run includes time spent waiting for a core, and CPU time does not.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    for _ in range(warmup):
        for fn in runs.values():
            fn()
    best = dict.fromkeys(runs, 2**63)
    cpu = dict.fromkeys(runs, 2**63)
    results = dict.fromkeys(runs, 0)
    for _ in range(rounds):
        for name, fn in runs.items():
            start, start_cpu = time.perf_counter_ns(), time.thread_time_ns()
            results[name] = fn()
            cpu[name] = min(cpu[name], time.thread_time_ns() - start_cpu)
            best[name] = min(best[name], time.perf_counter_ns() - start)
    return {name: Timing(best[name], cpu[name], results[name]) for name in runs}
