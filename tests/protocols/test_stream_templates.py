"""Stream encoders write a delta from a template of its chunk (`common.JsonTemplate`): the bytes must be those
of encoding every chunk whole, which they do when no template can be made."""

from __future__ import annotations

import os
from contextlib import nullcontext
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import ir
from harness.protocols import common, registry
from tests.strategies import events_for, responses, usages

_NAMES = registry.names()

_AWKWARD = st.text(
    st.characters(codec=None) | st.sampled_from(['"', "\\", "\n", "\r", "\x00", "\x1f", "\u2028", "\ud800", "\udfff"]),
    max_size=12,
)
"""Delta text with what JSON escapes (quotes, backslashes, control characters), what it does not (U+2028, non-ASCII)
and lone surrogates (which no encoder can write as UTF-8: both paths must fail alike)."""


def _outcomes(codec_name: str, events: list[ir.StreamEvent], *, templated: bool) -> list[bytes | str]:
    """Each event's bytes (and the closing bytes), or the name of the exception encoding it raised; the clock
    (SOURCE_DATE_EPOCH) moves on a second every eighth event, as the same in both runs."""
    out: list[bytes | str] = []
    with mock.patch.dict(os.environ, {common.SOURCE_DATE_EPOCH: "1700000000"}):
        encoder = registry.get(codec_name).stream_encoder()
        with nullcontext() if templated else mock.patch.object(common.JsonTemplate, "of", return_value=None):
            for i, step in enumerate([*[(lambda e=event: encoder.encode(e)) for event in events], encoder.close]):
                os.environ[common.SOURCE_DATE_EPOCH] = str(1700000000 + i // 8)  # a new second every eighth event
                try:
                    out.append(step())
                except (UnicodeEncodeError, ValueError) as exc:
                    out.append(type(exc).__name__)
    return out


@pytest.mark.parametrize("name", _NAMES)
@settings(max_examples=40)
@given(responses())
def test_templated_deltas_are_the_whole_chunks_bytes(name: str, response: ir.Response) -> None:
    events = events_for(response, chunk=2)
    assert _outcomes(name, events, templated=True) == _outcomes(name, events, templated=False)


@pytest.mark.parametrize("name", _NAMES)
@settings(max_examples=30)
@given(st.lists(_AWKWARD, min_size=1, max_size=6), usages, st.data())
def test_templated_awkward_deltas_are_the_whole_chunks_bytes(
    name: str, pieces: list[str], usage: ir.Usage, data: st.DataObject
) -> None:
    """Text, thinking and argument deltas of any characters, with usage reported and a message started again
    between them (which some chunks carry, so a template made before is stale after)."""
    deltas: list[ir.StreamEvent] = []
    for i, piece in enumerate(pieces):
        deltas += [ir.TextDelta(index=0, text=piece), ir.ThinkingDelta(index=1, text=piece)]
        deltas.append(ir.ToolCallDelta(index=2, arguments=piece))
        if data.draw(st.booleans(), label=f"usage after {i}"):
            deltas.append(ir.UsageEvent(usage=usage))
        if data.draw(st.booleans(), label=f"start after {i}"):
            deltas.append(ir.MessageStart(id=f"msg_{i}", model=f"m-{i}"))
    starts: list[ir.StreamEvent] = [ir.MessageStart(id="msg_1", model="m-1"), ir.TextStart(index=0)]
    starts += [ir.ThinkingStart(index=1), ir.ToolCallStart(index=2, id="call_1", name="f")]
    # A thinking block's end leaves its signature for the next part (Gemini), which a text delta then carries.
    ends: list[ir.StreamEvent] = [ir.ThinkingEnd(index=1, signature="sig"), *deltas[:1], ir.TextEnd(index=0)]
    ends += [ir.ToolCallEnd(index=2), ir.Done(stop_reason=ir.StopReason(kind="tool_use"), usage=usage)]
    events = [*starts, *deltas, *ends]
    assert _outcomes(name, events, templated=True) == _outcomes(name, events, templated=False)
