"""The reference backends against real wire: every real answer in the corpus is decoded, re-encoded by its
protocol's reference backend and the wire shapes compared. The generated `docs/shape.md` is current, every
remaining difference has a declared reason (and no reason is stale), and the agreement meets its floor."""

from __future__ import annotations

import pytest

from harness.cli.shapes import measure_corpus
from harness.protocols.corpus import HEADER
from harness.protocols.fidelity import Measurement, render, stale_reasons, undeclared
from harness.protocols.shape import Difference, Shape, WireEvent, agreement, differences, key_paths, shape_of
from tests.conftest import CORPUS, REPO

DOC = REPO / "docs" / "shape.md"

KEY_PATH_FLOOR = 0.93
"""Key paths agreeing per protocol or profile (each below 100% only by declared differences); 95% overall."""


@pytest.fixture(scope="module")
def measurements() -> list[Measurement]:
    if not CORPUS.is_dir():
        pytest.skip(f"real-traffic corpus not found at {CORPUS} (set CONFORMANCE_CORPUS)")
    return measure_corpus(CORPUS)


def test_docs_shape_md_is_up_to_date(measurements: list[Measurement]) -> None:
    assert render(measurements, header=HEADER) == DOC.read_text(encoding="utf-8"), (
        "docs/shape.md is stale: run `conformance shapes --corpus ../shared/corpus > docs/shape.md`"
    )


def test_every_remaining_difference_has_a_reason_and_no_reason_is_stale(measurements: list[Measurement]) -> None:
    assert undeclared(measurements) == []
    assert stale_reasons(measurements) == []


def test_every_corpus_answer_of_a_registered_protocol_is_measured(measurements: list[Measurement]) -> None:
    assert {m.protocol: m.skipped for m in measurements if m.skipped} == {}
    assert sum(len(m.sources) for m in measurements) >= 66


def test_agreement_meets_its_floor(measurements: list[Measurement]) -> None:
    same = total = 0
    for m in measurements:
        done, of = m.agreement.key_paths
        same, total = same + done, total + of
        assert done / of >= KEY_PATH_FLOOR, f"{m.protocol}: {done}/{of} key paths agree"
        assert m.agreement.headers[0] >= 1
    assert same / total >= 0.95


def test_a_reference_that_drops_a_field_is_caught() -> None:
    real = shape_of([WireEvent("chunk:content", {"id": "x", "system_fingerprint": "fp", "choices": [{"delta": {}}]})])
    ours = shape_of([WireEvent("chunk:content", {"id": "x", "choices": [{"delta": {}}]})])
    assert [d.key for d in differences(real, ours)] == ["path real chunk:content system_fingerprint"]
    assert agreement(real, ours).key_paths == (4, 5)


def test_runs_of_one_event_type_collapse_but_an_optional_event_between_them_counts() -> None:
    deltas = [WireEvent("content_block_delta:text_delta", {"type": "content_block_delta"})] * 3
    ping = WireEvent("ping", {"type": "ping"})
    assert Shape().sequences == []
    assert shape_of([deltas[0], ping, *deltas[1:]]).sequences == [
        ("content_block_delta:text_delta", "ping", "content_block_delta:text_delta")
    ]
    assert shape_of(deltas).sequences == [("content_block_delta:text_delta",)]
    seq = differences(shape_of([*deltas, ping]), shape_of([ping, *deltas]))
    assert [d.kind for d in seq] == ["sequence"] and isinstance(seq[0], Difference)


def test_key_paths_carry_value_types_and_do_not_enter_user_data() -> None:
    paths = key_paths({"a": [{"b": None}, {"b": 1}], "args": {"city": "x"}}, frozenset({"args"}))
    assert paths == {"a": {"array"}, "a[]": {"object"}, "a[].b": {"null", "number"}, "args": {"object"}}
