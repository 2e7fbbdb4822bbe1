"""Record and replay: vcrpy cassettes (one per backend, scenario and streaming mode), secret scrubbing,
matching by scenario, chunk boundaries kept, a replay transport and server."""

from harness.record.chunks import Rechunk
from harness.record.layout import Recorded, cassette_path, recorded
from harness.record.modes import RecordMode
from harness.record.recorder import Source, record_one, reference_source
from harness.record.replay import CassetteError, Replayer, ReplayMissError, ReplayTransport, create_replay_app

__all__ = [
    "CassetteError",
    "Rechunk",
    "RecordMode",
    "Recorded",
    "ReplayMissError",
    "ReplayTransport",
    "Replayer",
    "Source",
    "cassette_path",
    "create_replay_app",
    "record_one",
    "recorded",
    "reference_source",
]
