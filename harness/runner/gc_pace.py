"""The cyclic garbage collector paced for a matrix run, and kept off what a parent of workers holds to the end.

Pacing: a run allocates objects that live for the whole run (SDK responses, stream events, traces) and die after
it: at CPython's default pace (a young collection every 700 net allocations) most of them outlive two young
collections, reach the oldest generation and make it grow, which starts a full collection of the whole heap (the
SDKs' imported types included) about 14 times in the bench's 1152 cases. A young generation of `YOUNG` objects
holds a run's own objects until they die: the collector's time fell from 15 % of a -j 1 run's CPU to 7 %
(docs/ci.md). Garbage is still collected, a little later.

Keeping: the parent of worker processes unpickles every judged case they send and holds it to the end of the run.
Collections triggered while it unpickled, and each later one that traversed all it held again, were most of the
parent's CPU while the workers ran (1.4 of 1.5 s on a full matrix). `received` unpickles with the collector held
and then moves everything tracked out of its reach (`gc.freeze`) until the block of `keeping` ends."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

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


def received(unpickle: Callable[[], T]) -> T:
    """`unpickle()`'s value, made with the collector held, then kept out of its reach with all that is tracked now
    (`gc.freeze`): call it inside `keeping`, for what is held to the end of it."""
    held = gc.isenabled()
    gc.disable()
    try:
        return unpickle()
    finally:
        if held:
            gc.enable()
        gc.freeze()


@contextmanager
def keeping() -> Iterator[None]:
    """What `received` kept out of the collector's reach inside the block is given back to it afterwards
    (`gc.unfreeze`: everything frozen, an outer `gc.freeze`'s objects too)."""
    try:
        yield
    finally:
        gc.unfreeze()
