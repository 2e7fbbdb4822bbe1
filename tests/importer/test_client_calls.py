"""An imported case whose answer or history holds a client-executed call (`ToolCallPart.call_type`) needs
`Capability.CLIENT_TOOL_CALLS`, so the planner calls it unsupported before any protocol but Responses."""

from __future__ import annotations

from harness import ir
from harness.importer.scenario import requirements
from harness.ir import Capability
from harness.scenarios.model import Expectations, ReplyOk

CUSTOM = ir.ToolCallPart(id="call_1", name="write_sql", arguments_raw="SELECT 1", call_type="custom")


def test_a_client_call_in_the_answer_needs_the_capability() -> None:
    request = ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="Count")])])
    needs = requirements(request, ReplyOk(content=[CUSTOM]), Expectations())
    assert Capability.CLIENT_TOOL_CALLS in needs
    plain = ReplyOk(content=[CUSTOM.model_copy(update={"call_type": None, "arguments_raw": "{}"})])
    assert Capability.CLIENT_TOOL_CALLS not in requirements(request, plain, Expectations())


def test_a_client_call_in_the_history_needs_the_capability() -> None:
    messages = [
        ir.Message(role="user", content=[ir.TextPart(text="Count")]),
        ir.Message(role="assistant", content=[CUSTOM]),
    ]
    request = ir.Request(model="m", messages=messages)
    assert Capability.CLIENT_TOOL_CALLS in requirements(
        request, ReplyOk(content=[ir.TextPart(text="ok")]), Expectations()
    )
