"""With the Responses losses table applied, a faithful translation into the Responses wire has no request-side
divergence, and every translation bug of the shared catalogue that the wire can carry still shows as one."""

from __future__ import annotations

from typing import Any

import pytest

from harness import ir
from harness.diff import request_divergences
from harness.protocols.responses import LOSSES
from tests.protocols.responses.support import CODEC
from tests.protocols.test_losses import BUGS, client_request

NOT_CARRIED = {"stop dropped": "Request.stop"}
"""Bugs of the shared catalogue in a field this wire cannot carry, with the loss that says so."""


def _upstream(request: ir.Request) -> dict[str, Any]:
    return ir.to_json(CODEC.decode_request(CODEC.encode_request(request)))


def test_a_faithful_translation_has_no_request_divergence() -> None:
    client = client_request()
    assert request_divergences(ir.to_json(client), _upstream(client), losses=list(CODEC.losses)) == []


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_a_translation_bug_is_a_request_divergence(bug: str) -> None:
    client = client_request()
    found = request_divergences(ir.to_json(client), _upstream(BUGS[bug](client)), losses=list(CODEC.losses))
    if bug in NOT_CARRIED:
        assert NOT_CARRIED[bug] in LOSSES and found == []
    else:
        assert found != []
