"""Stored-response chains through an official SDK: each call of a chain scenario (`Scenario.steps`) stored by the
server and continued by the next with only its new input, as a client of the OpenAI Responses API chains them
(`responses.create(..., store=True)`, then `previous_response_id=<the last response's id>`).

Only the Responses API's SDK can chain (`chain_driver`); every other client keeps the conversation itself and
sends it whole (`Scenario.request_for`). Before the chain, the SDK continues an id no server issued with the first
call's input: a server must refuse it (OpenAI: 400 `previous_response_not_found`), not answer it.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable

from harness.drivers.base import SdkResult
from harness.scenarios.model import Scenario

ChainDriver = Callable[..., SdkResult]
"""`(scenario, *, model, stream, base_url, http_client) -> SdkResult` of the chain's last call, with the calls
before it in `SdkResult.chain`."""
_CHAINS = {"responses": "harness.drivers.responses_chain"}
"""Frontend -> the module whose `run_chain` chains through its SDK (imported when first asked for)."""


def never_issued(scenario: Scenario) -> str:
    """An id in OpenAI's form (`resp_` and 50 hex digits) that no server issued, derived from the scenario."""
    return "resp_" + hashlib.sha256(f"never issued/{scenario.id}".encode()).hexdigest()[:50]


def can_chain(frontend: str) -> bool:
    """Whether the SDK of `frontend` chains stored responses (else it resends the whole conversation)."""
    return frontend in _CHAINS


def chain_driver(frontend: str) -> ChainDriver | None:
    """How the SDK of `frontend` chains stored responses; None: it cannot."""
    module = _CHAINS.get(frontend)
    if module is None:
        return None
    driver: ChainDriver = importlib.import_module(module).run_chain
    return driver
