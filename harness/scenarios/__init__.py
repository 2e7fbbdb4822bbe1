"""Scenarios: the protocol-neutral request, the scripted reply, and the checks on what the SDK saw.

Files live in `scenarios/*.yaml` (format in `scenarios/README.md`); `load_scenarios` validates them against
the JSON Schema generated from `harness.scenarios.model`.
"""

from harness.scenarios.checks import CheckResult, evaluate, evaluate_upstream
from harness.scenarios.loader import ScenarioError, load_scenario, load_scenarios, scenario_json_schema
from harness.scenarios.model import (
    DEFAULT_MODEL,
    Capability,
    ChainStep,
    Chunking,
    ErrorExpectation,
    Expectations,
    MidstreamError,
    Reply,
    ReplyError,
    ReplyModels,
    ReplyOk,
    Scenario,
    ScenarioRequest,
    SdkException,
    StreamMode,
    ToolCallExpectation,
)
from harness.scenarios.script import full_events, scripted_events, scripted_response

__all__ = [
    "DEFAULT_MODEL",
    "Capability",
    "ChainStep",
    "CheckResult",
    "Chunking",
    "ErrorExpectation",
    "Expectations",
    "MidstreamError",
    "Reply",
    "ReplyError",
    "ReplyModels",
    "ReplyOk",
    "Scenario",
    "ScenarioError",
    "ScenarioRequest",
    "SdkException",
    "StreamMode",
    "ToolCallExpectation",
    "evaluate",
    "evaluate_upstream",
    "full_events",
    "load_scenario",
    "load_scenarios",
    "scenario_json_schema",
    "scripted_events",
    "scripted_response",
]
