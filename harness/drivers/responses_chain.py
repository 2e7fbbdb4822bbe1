"""The OpenAI Responses API's stored-response chain through the `openai` SDK (`harness.drivers.chain`)."""

from __future__ import annotations

from typing import Any

import openai

from harness import ir
from harness.drivers.base import DECODE_ERRORS, ChainCall, SdkResult, failed
from harness.drivers.chain import never_issued
from harness.drivers.responses_sdk import (
    DRIVER,
    StreamShapeError,
    _classify,
    _StreamState,
    input_items,
    params,
    response_to_ir,
)
from harness.scenarios.model import Scenario

_WITH_RESPONSE = ("response.completed", "response.incomplete", "response.failed")


def _create(client: openai.OpenAI, kwargs: dict[str, Any], stream: bool) -> tuple[SdkResult, str | None, list[Any]]:
    """One `responses.create` call: what the SDK saw, the id of the response it got (None: none) and its output
    items as the client passes them back."""
    state = _StreamState()
    found: Any = None
    try:
        if not stream:
            found = client.responses.create(**kwargs)
            return SdkResult(response=response_to_ir(found)), found.id, _dumped(found.output)
        with client.responses.create(**kwargs, stream=True) as events:
            for event in events:
                if event.type in _WITH_RESPONSE:
                    found = event.response
                state.add(event)
    except (openai.APIError, StreamShapeError, *DECODE_ERRORS) as exc:
        error, neutral = _classify(exc)
        events = state.builder.fail(error) if stream and state.builder.started else None
        return failed(error, neutral, exc, events=events), None, []
    return state.result(), found.id if found is not None else None, _dumped(found.output if found is not None else [])


def _dumped(items: Any) -> list[Any]:
    return [item.model_dump(exclude_none=True) for item in items]


def _text(result: SdkResult) -> str:
    if result.response is not None:
        return "".join(p.text for p in result.response.content if isinstance(p, ir.TextPart))
    return "".join(e.text for e in result.events or () if isinstance(e, ir.TextDelta))


def _step(scenario: Scenario, step: int, model: str, stream: bool) -> tuple[dict[str, Any], list[Any]]:
    """The `responses.create` arguments of one call with only its new input, and that input as items."""
    request = scenario.request_for(model, stream=stream, step=step)
    new_input = request.model_copy(update={"messages": list(scenario.step_requests()[step].messages)})
    return params(new_input), input_items(new_input)


def _call(
    client: openai.OpenAI, scenario: Scenario, step: int, model: str, stream: bool, previous: str | None
) -> tuple[SdkResult, str | None]:
    kwargs, _ = _step(scenario, step, model, stream)
    kwargs["store"] = True
    if previous is not None:
        kwargs["previous_response_id"] = previous
    result, got, _ = _create(client, kwargs, stream)
    return result, got


def _compacted(client: openai.OpenAI, scenario: Scenario, model: str, stream: bool) -> SdkResult:
    """Stateless (`store: false`): each earlier call sends the conversation so far, then the conversation is
    compacted and the last call sends the compaction's output before its new input."""
    held: list[Any] = []
    calls: list[ChainCall] = []
    for step in range(len(scenario.steps)):
        kwargs, new = _step(scenario, step, model, stream)
        kwargs["input"] = [*held, *new]
        result, got, output = _create(client, kwargs, stream)
        if result.error is not None:
            return result.model_copy(update={"chain": calls})
        calls.append(ChainCall(response_id=got, text=_text(result)))
        held += [*new, *output]
    try:
        compacted = client.responses.compact(model=model, input=held)
    except openai.APIError as exc:
        error, neutral = _classify(exc)
        calls.append(ChainCall(compact=True, error=error))
        return failed(error, neutral, exc).model_copy(update={"chain": calls})
    calls.append(ChainCall(compact=True, response_id=compacted.id))
    kwargs, new = _step(scenario, len(scenario.steps), model, stream)
    kwargs["input"] = [*_dumped(compacted.output), *new]
    result, _, _ = _create(client, kwargs, stream)
    return result.model_copy(update={"chain": calls})


def run_chain(scenario: Scenario, *, model: str, stream: bool, base_url: str, http_client: Any) -> SdkResult:
    """The chain through the `openai` SDK's Responses client: an unknown id first, then each call in order (or,
    for a compaction scenario, the conversation compacted before the last call)."""
    client = DRIVER.client(base_url, http_client)
    if scenario.compact:
        return _compacted(client, scenario, model, stream)
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
