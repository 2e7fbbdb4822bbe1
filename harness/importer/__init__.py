"""Real captures as cases (`conformance import`): a recorded exchange becomes a scenario (the request as IR, the
decoded answer as its scripted reply, expectations from what the backend's own SDK saw), the recorded answer
becomes its backend's cassette verbatim (`metadata.source: real`), and every other backend's reference answers
the decoded reply, so every frontend can be run translated against the real answer."""

from harness.importer.case import Imported, import_exchange
from harness.importer.exchange import (
    Exchange,
    ImportFailure,
    ImportUsageError,
    detect_protocol,
    from_capture,
    from_raw,
    interaction_count,
)
from harness.importer.scenario import slug

__all__ = [
    "Exchange",
    "ImportFailure",
    "ImportUsageError",
    "Imported",
    "detect_protocol",
    "from_capture",
    "from_raw",
    "import_exchange",
    "interaction_count",
    "slug",
]
