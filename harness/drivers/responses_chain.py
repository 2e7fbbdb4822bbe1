"""The OpenAI Responses API's stored-response chain through the `openai` SDK (`harness.drivers.chain`)."""

from __future__ import annotations

from typing import Any

import openai

from harness import ir
from harness.drivers.base import DECODE_ERRORS, ChainCall, SdkResult, failed
from harness.drivers.chain import never_issued
from harness.drivers.responses_sdk import DRIVER, StreamShapeError, _classify, _StreamState, params, response_to_ir
from harness.scenarios.model import Scenario

_WITH_RESPONSE = ("response.completed", "response.incomplete", "response.failed")


def _create(client: openai.OpenAI, kwargs: dict[str, Any], stream: bool) -> tuple[SdkResult, str | None]:
    """One `responses.create` call: what the SDK saw, and the id of the response it got (None: none)."""
    state = _StreamState()
    found: str | None = None
    try:
        if not stream:
            response = client.responses.create(**kwargs)
            return SdkResult(response=response_to_ir(response)), response.id
        with client.responses.create(**kwargs, stream=True) as events:
            for event in events:
                if event.type in _WITH_RESPONSE:
                    found = event.response.id
                state.add(event)
    except (openai.APIError, StreamShapeError, *DECODE_ERRORS) as exc:
        error, neutral = _classify(exc)
        events = state.builder.fail(error) if stream and state.builder.started else None
        return failed(error, neutral, exc, events=events), None
    return state.result(), found


def _text(result: SdkResult) -> str:
    if result.response is not None:
        return "".join(p.text for p in result.response.content if isinstance(p, ir.TextPart))
    return "".join(e.text for e in result.events or () if isinstance(e, ir.TextDelta))


def _call(
    client: openai.OpenAI, scenario: Scenario, step: int, model: str, stream: bool, previous: str | None
) -> tuple[SdkResult, str | None]:
    request = scenario.request_for(model, stream=stream, step=step)
    new_input = scenario.step_requests()[step].messages
    kwargs = params(request.model_copy(update={"messages": list(new_input)}))
    kwargs["store"] = True
    if previous is not None:
        kwargs["previous_response_id"] = previous
    return _create(client, kwargs, stream)


def run_chain(scenario: Scenario, *, model: str, stream: bool, base_url: str, http_client: Any) -> SdkResult:
    """The chain through the `openai` SDK's Responses client: an unknown id first, then each call in order."""
    client = DRIVER.client(base_url, http_client)
    unknown = never_issued(scenario)
    probe, probe_id = _call(client, scenario, 0, model, stream, unknown)
    first = ChainCall(
        previous_response_id=unknown, unknown=True, response_id=probe_id, text=_text(probe), error=probe.error
    )
    calls = [first]
    previous: str | None = None
    for step in range(len(scenario.steps) + 1):
        result, got = _call(client, scenario, step, model, stream, previous)
        if step == len(scenario.steps) or result.error is not None or got is None:
            # The last call, or a call the chain cannot go on from: what the client saw is this call's.
            return result.model_copy(update={"chain": calls})
        calls.append(ChainCall(previous_response_id=previous, response_id=got, text=_text(result)))
        previous = got
    raise AssertionError("unreachable: the loop returns at the last call")
