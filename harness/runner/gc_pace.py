"""The cyclic garbage collector paced for a matrix run. A run allocates objects that live for the whole run (SDK
responses, stream events, traces) and die after it: at CPython's default pace (a young collection every 700 net
allocations) most of them outlive two young collections, reach the oldest generation and make it grow, which
starts a full collection of the whole heap (the SDKs' imported types included) about 14 times in the bench's
1152 cases. A young generation of `YOUNG` objects holds a run's own objects until they die: the collector's time
fell from 15 % of a -j 1 run's CPU to 7 % (docs/ci.md). Garbage is still collected, a little later."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG = 10_000
"""Net allocations between two young collections (CPython's default is 700)."""


@contextmanager
def paced() -> Iterator[None]:
    """The collector at the matrix pace inside the block, as it was before after it."""
    before = gc.get_threshold()
    gc.set_threshold(max(YOUNG, before[0]), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
