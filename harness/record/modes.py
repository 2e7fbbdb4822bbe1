"""Record modes, named as pytest-recording names them."""

from __future__ import annotations

from enum import StrEnum

from vcr.record_mode import RecordMode as VcrMode


class RecordMode(StrEnum):
    """What happens when a recording is missing or exists."""

    NONE = "none"
    """Replay only; a missing recording is an error and no socket is ever opened."""
    ONCE = "once"
    """Record a cassette that does not exist yet; replay existing ones unchanged."""
    NEW_EPISODES = "new_episodes"
    """Replay what matches; record what does not."""
    ALL = "all"
    """Record everything again, replacing what matches."""
    REWRITE = "rewrite"
    """Delete the cassette first, then record (pytest-recording's mode)."""

    @property
    def vcr_mode(self) -> VcrMode:
        """The vcrpy record mode that implements it (rewrite records into a fresh file)."""
        return {
            RecordMode.NONE: VcrMode.NONE,
            RecordMode.ONCE: VcrMode.ONCE,
            RecordMode.NEW_EPISODES: VcrMode.NEW_EPISODES,
            RecordMode.ALL: VcrMode.ALL,
            RecordMode.REWRITE: VcrMode.ALL,
        }[self]
