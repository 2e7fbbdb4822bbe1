"""The OpenAI and Responses stream encoders write a delta from a template of its chunk (`common.JsonTemplate`):
the bytes must be those of encoding every chunk whole, which they do when no template can be made."""

from __future__ import annotations

import os
from unittest import mock

import pytest
from hypothesis import given, settings

from harness import ir
from harness.protocols import common, encode_events, registry
from tests.strategies import events_for, responses

_TEMPLATED = [name for name in registry.names() if registry.get(name).family in ("openai", "responses")]


@pytest.mark.parametrize("name", _TEMPLATED)
@settings(max_examples=40)
@given(responses())
def test_templated_deltas_are_the_whole_chunks_bytes(name: str, response: ir.Response) -> None:
    codec = registry.get(name)
    events = events_for(response, chunk=2)
    with mock.patch.dict(os.environ, {common.SOURCE_DATE_EPOCH: "1700000000"}):  # the same `created` in both
        templated = encode_events(codec, events)
        with mock.patch.object(common.JsonTemplate, "of", return_value=None):
            whole = encode_events(codec, events)
    assert templated == whole
