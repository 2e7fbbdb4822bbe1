"""The cost of judging an answer against its provider's spec (`harness.protocols.wire_schema.answer_findings`), per
event, as a ratio to decoding the same event's JSON (`json.loads`) in the same run.

The events are every answer payload of the committed cassettes of each protocol with a vendored spec (bodies,
each stream event, error bodies), as the matrix checks them. `jsonschema`'s validator over the same documents
is timed too (`is_valid` on the governing document only: the work `answer_findings` does for a first answer),
to show what compiling the documents into plain checks saves.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from bench._timing import interleaved_best
from harness.capture.loader import load_interactions
from harness.protocols import registry
from harness.protocols.wire_schema import AnswerKind, answer_findings, answer_payloads

CASSETTES = Path(__file__).resolve().parent.parent / "cassettes"
PROTOCOLS = ("openai", "responses", "anthropic", "gemini", "bedrock")
ROUNDS = 5


def _events(protocol: str) -> list[tuple[AnswerKind, str]]:
    """(kind, JSON text) of every answer payload in the protocol's cassettes."""
    out: list[tuple[AnswerKind, str]] = []
    for path in sorted((CASSETTES / protocol).glob("*.yaml")):
        for item in load_interactions(path):
            media = item.response.headers.get("content-type", "application/json")
            for kind, payload in answer_payloads(item.response.body, media_type=media, status=item.response.status):
                out.append((kind, json.dumps(payload, ensure_ascii=False)))
    return out


def _jsonschema(protocol: str) -> dict[str, jsonschema.Draft202012Validator]:
    ref = registry.facts(protocol).wire_specs[0]
    doc: dict[str, Any] = json.loads(resources.files(ref.package).joinpath(f"{ref.document}.json").read_text())
    return {
        kind: jsonschema.Draft202012Validator({**doc, "$ref": f"#/$defs/{name}"})
        for kind, name in doc["x-entries"].items()
    }


def main() -> None:
    """Print µs per event for decoding, the spec check and jsonschema, and the check's ratio to decoding."""
    head = f"{'protocol':10} {'events':>7} {'decode µs':>10} {'check µs':>9} {'ratio':>6} {'jsonschema µs':>14}"
    print(head, f"{'ratio':>6}")
    for protocol in PROTOCOLS:
        events = _events(protocol)
        validators = _jsonschema(protocol)
        parsed = [(kind, json.loads(text)) for kind, text in events]
        for kind, value in parsed:
            answer_findings(protocol, kind, value)  # compiled before timing

        def decode(events: list[tuple[AnswerKind, str]] = events) -> int:
            return sum(1 for _, text in events if json.loads(text) is not None)

        def check(protocol: str = protocol, parsed: list[tuple[AnswerKind, Any]] = parsed) -> int:
            return sum(len(answer_findings(protocol, kind, value)) >= 0 for kind, value in parsed)

        def schema(validators: dict[str, Any] = validators, parsed: list[tuple[AnswerKind, Any]] = parsed) -> int:
            return sum(validators[kind].is_valid(value) >= 0 for kind, value in parsed)

        timing = interleaved_best({"decode": decode, "check": check}, rounds=ROUNDS, warmup=1)
        slow = interleaved_best({"jsonschema": schema}, rounds=1)
        n = len(events)
        d, c, j = (
            timing["decode"].per(n, cpu=True),
            timing["check"].per(n, cpu=True),
            slow["jsonschema"].per(n, cpu=True),
        )
        print(f"{protocol:10} {n:7} {d:10.2f} {c:9.2f} {c / d:6.1f} {j:14.1f} {j / d:6.0f}")


if __name__ == "__main__":
    main()
