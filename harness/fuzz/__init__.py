"""Generated scenarios (`conformance fuzz`): hypothesis explores the protocol space of one (frontend, backend) pair
through the proxy, judges every example as the matrix does, and shrinks a failure to a scenario file and its
cassettes (`harness.fuzz.output`)."""

from harness.fuzz.engine import Finding, FuzzOptions, FuzzResult, fuzz, space_of, stream_modes
from harness.fuzz.output import write_finding

__all__ = ["Finding", "FuzzOptions", "FuzzResult", "fuzz", "space_of", "stream_modes", "write_finding"]
