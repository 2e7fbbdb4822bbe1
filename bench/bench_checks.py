"""The cost of every registered check on one translated run (`harness.checks.run_checks`: the scenario checks, the
wire checks, the published specs, the headers and the answer's raw fields), as a ratio to decoding the same answer
with the frontend protocol's own codec in the same run (what reading an answer costs at the least). `checks` judges
answers seen before (what the checks remember, `harness.checks.memo`, serves them); `cold` judges each as if never
seen (every memo emptied, each run a fresh subject), as the first run of a matrix to send it does.

The runs are the committed cassettes' successful answers of each frontend protocol, played as the translated run
of a case whose backend is the same protocol (the checks see the answer, its headers and the request as sent).
"""

from __future__ import annotations

import dataclasses
import gc
from pathlib import Path

from bench._timing import interleaved_best
from harness.capture.loader import load_interactions
from harness.checks import Subject, run_checks
from harness.checks.memo import Memo
from harness.drivers.base import SdkResult
from harness.protocols import registry
from harness.scenarios import load_scenario

ROOT = Path(__file__).resolve().parent.parent
PROTOCOLS = ("openai", "responses", "anthropic", "gemini", "bedrock", "ollama")
ROUNDS = 3


def _subjects(protocol: str) -> list[Subject]:
    out = []
    for path in sorted((ROOT / "cassettes" / protocol).glob("*.yaml")):
        scenario_file = ROOT / "scenarios" / f"{path.name.split('.')[0]}.yaml"
        if not scenario_file.exists():
            continue
        scenario = load_scenario(scenario_file)
        for item in load_interactions(path):
            if item.response.status != 200 or scenario.kind == "models_list":
                continue
            stream = path.name.endswith(".stream.yaml")
            out.append(
                Subject(
                    role="translated",
                    client=protocol,
                    backend=protocol,
                    stream=stream,
                    scenario=scenario,
                    result=SdkResult(),
                    upstream_body=item.request.body,
                    upstream_headers=item.request.headers,
                    frontend_headers=item.request.headers,
                    frontend_response_headers=item.response.headers,
                    frontend_status=200,
                    frontend_chunks=(item.response.body,),
                )
            )
    return out


def main() -> None:
    """Print ms per run for decoding the answer and for every check, and their ratio."""
    print(f"{'protocol':10} {'runs':>5} {'decode ms':>10} {'checks ms':>10} {'ratio':>6} {'cold ms':>8} {'ratio':>6}")
    for protocol in PROTOCOLS:
        subjects = _subjects(protocol)
        codec = registry.get(protocol)

        def decode(subjects: list[Subject] = subjects, codec: object = codec) -> int:
            count = 0
            for subject in subjects:
                if subject.stream:
                    decoder = registry.get(subject.client).stream_decoder()
                    count += len([*decoder.feed(subject.frontend_chunks[0]), *decoder.close()])
                else:
                    count += registry.get(subject.client).decode_response(subject.frontend_chunks[0]) is not None
            return count

        def checks(subjects: list[Subject] = subjects) -> int:
            return sum(len(run_checks(subject)) for subject in subjects)

        def cold(subjects: list[Subject] = subjects) -> int:
            _forget()
            return sum(len(run_checks(dataclasses.replace(subject))) for subject in subjects)

        checks()  # the specs compile once, before timing
        timing = interleaved_best({"decode": decode, "checks": checks, "cold": cold}, rounds=ROUNDS, warmup=1)
        n = len(subjects)
        d, c = timing["decode"].per(n, cpu=True) / 1e3, timing["checks"].per(n, cpu=True) / 1e3
        f = timing["cold"].per(n, cpu=True) / 1e3
        print(f"{protocol:10} {n:5} {d:10.3f} {c:10.3f} {c / d:6.1f} {f:8.3f} {f / d:6.1f}")


def _forget() -> None:
    """Empty every memo of the checks (found among the live objects: each module keeps its own)."""
    for memo in [obj for obj in gc.get_objects() if isinstance(obj, Memo)]:
        memo.clear()


if __name__ == "__main__":
    main()
