"""`conformance fuzz` throughput at -j 1 on the built-in proxy in-process, as a ratio to a reference measured in
the same run.

Contenders, each on one frontend/backend pair, streamed:
- `fuzz`: a fuzz session of `BENCH_FUZZ_EXAMPLES` examples (default 60, seeded): hypothesis draws each scenario,
  the reference backends' answers are recorded for it, the three runs go through the proxy, the judge decides;
- `matrix case`: the same number of judged cases of a committed scenario (`tool-call-single`) from its committed
  cassettes, each with a fresh case runner: what one example costs without generating or recording.

The issue's bar is at least 20 examples a second; the ratio says how much of an example is the fuzzing's own cost.
`BENCH_FUZZ_PAIR` picks the pair (default `anthropic,openai`).
"""

from __future__ import annotations

import os
from pathlib import Path

from bench._timing import interleaved_best
from harness.fuzz import FuzzOptions, fuzz
from harness.runner.engine import CaseRunner
from harness.runner.plan import MatrixOptions
from harness.scenarios.loader import load_scenarios
from harness.trace import Case

EXAMPLES = int(os.environ.get("BENCH_FUZZ_EXAMPLES", "60"))
FRONTEND, BACKEND = os.environ.get("BENCH_FUZZ_PAIR", "anthropic,openai").split(",")
ROOT = Path(__file__).resolve().parent.parent


def fuzz_session() -> int:
    """One seeded session; returns the examples run."""
    return fuzz(FuzzOptions(FRONTEND, BACKEND, True, max_examples=EXAMPLES, seed=1234)).examples


def matrix_cases() -> int:
    """As many judged cases of a committed scenario, each on a fresh case runner; returns the count."""
    scenario = next(s for s in load_scenarios(ROOT / "scenarios") if s.id == "tool-call-single")
    options = MatrixOptions(scenarios=ROOT / "scenarios", cassettes=ROOT / "cassettes", write_traces=False)
    for _ in range(EXAMPLES):
        runner = CaseRunner(options, [scenario], sorted({FRONTEND, BACKEND}))
        try:
            runner.run_case(Case(scenario.id, FRONTEND, BACKEND, True))
        finally:
            runner.close()
    return EXAMPLES


def main() -> None:
    """Print examples per second of each contender and their ratio."""
    timings = interleaved_best({"fuzz": fuzz_session, "matrix case": matrix_cases}, rounds=3, warmup=1)
    fuzz_t, case_t = timings["fuzz"], timings["matrix case"]
    for name, t in timings.items():
        print(
            f"{name:12s} {t.result} in {t.seconds:6.2f} s wall: {t.result / t.seconds:6.1f}/s "
            f"({t.result / (t.cpu_ns / 1e9):6.1f}/s of CPU)"
        )
    print(
        f"fuzz example / matrix case: {fuzz_t.best_ns / case_t.best_ns:.2f}x wall, "
        f"{fuzz_t.cpu_ns / case_t.cpu_ns:.2f}x CPU  ({FRONTEND}->{BACKEND}, stream, -j 1)"
    )
