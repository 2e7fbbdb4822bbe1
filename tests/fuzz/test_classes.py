"""The strategy classes added after tool calls (images, files, mid-stream errors, errors at each status) each find the
catalogued fault of their class on the built-in proxy with a fixed seed, shrink it to an example of that class, and
stay green on the clean proxy for the same seed (every drawn example judged a pass)."""

from __future__ import annotations

import base64

import pytest

from harness.faults.catalog import by_name
from harness.fuzz import FuzzOptions, FuzzResult, fuzz
from harness.fuzz.strategies import IMAGE_MAGIC, PDF_HEAD
from harness.scenarios.model import ReplyError, ReplyOk, Scenario


def _images_sent(scenario: Scenario) -> list[bytes]:
    return [
        base64.b64decode(p.source.data)
        for m in scenario.request.messages
        for p in m.content
        if p.kind == "image" and p.source.type == "base64"
    ]


def _image_dropped(scenario: Scenario) -> None:
    images = _images_sent(scenario)
    assert len(images) == 1  # shrunk: one image is the least that can be dropped
    assert any(images[0].startswith(magic) for magic in IMAGE_MAGIC.values())


def _file_dropped(scenario: Scenario) -> None:
    files = [p for m in scenario.request.messages for p in m.content if p.kind == "file"]
    assert len(files) == 1  # shrunk: one file is the least that can be dropped
    assert base64.b64decode(files[0].data).startswith(PDF_HEAD)


def _midstream_swallowed(scenario: Scenario) -> None:
    reply = scenario.reply
    assert isinstance(reply, ReplyOk) and reply.midstream_error is not None
    assert scenario.expect.error is not None and scenario.expect.error.exception == "stream_error"


def _rate_limit_as_500(scenario: Scenario) -> None:
    reply = scenario.reply
    assert isinstance(reply, ReplyError) and reply.status == 429 and reply.error.kind == "throttled"
    assert scenario.expect.error is not None and scenario.expect.error.retry_after == reply.error.retry_after


# (fault, frontend, backend, stream, seed, examples, what the shrunk example must be). `examples` is the budget of
# both sessions: the faulty one stops at its first failure (then shrinks), the clean one runs all of them.
CLASSES = [
    ("image-dropped", "openai", "anthropic", False, 2, 40, _image_dropped),
    ("file-part-dropped", "anthropic", "openai", False, 2, 40, _file_dropped),
    ("midstream-error-as-stop", "openai", "anthropic", True, 3, 30, _midstream_swallowed),
    ("rate-limit-as-server-error", "openai", "anthropic", False, 1, 30, _rate_limit_as_500),
]


@pytest.mark.parametrize(("fault", "frontend", "backend", "stream", "seed", "examples", "shape"), CLASSES)
def test_the_fault_of_each_class_is_found_and_the_clean_proxy_stays_green(
    fault: str, frontend: str, backend: str, stream: bool, seed: int, examples: int, shape: object
) -> None:
    faulty: FuzzResult = fuzz(
        FuzzOptions(frontend, backend, stream, max_examples=examples, seed=seed, hooks=by_name(fault).hooks)
    )
    assert faulty.finding is not None, dict(faulty.verdicts)
    assert faulty.finding.result.verdict.is_proxy_bug
    shape(faulty.finding.scenario)  # type: ignore[operator]
    clean = fuzz(FuzzOptions(frontend, backend, stream, max_examples=examples, seed=seed))
    assert clean.finding is None
    assert clean.examples == examples and set(clean.verdicts) == {"pass"}
