"""Stream events shared by every protocol: the grammar validator and the accumulator (events -> response).

Imports only `harness.ir`.
"""

from harness.stream.accumulate import Accumulated, Accumulator, accumulate, parse_tool_arguments
from harness.stream.grammar import GrammarChecker, Violation, validate

__all__ = [
    "Accumulated",
    "Accumulator",
    "GrammarChecker",
    "Violation",
    "accumulate",
    "parse_tool_arguments",
    "validate",
]
