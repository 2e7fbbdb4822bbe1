"""How the built-in proxy fares on real answers: import every exchange of the real-traffic corpus as a case
(`conformance import`, into a scratch folder, never into the project) and run every frontend translated against
each recorded answer.

    python scripts/corpus_matrix.py [--corpus ../shared/corpus] [--out DIR] [--file anthropic/stream-text.yaml ...]
                                    [--reports DIR] [--details]

Prints a Markdown table, one row per exchange: the backend whose real answer it is, whose view the expectations
are, and each frontend's verdict; then the totals, and with `--details` the reason of every case that did not pass.
Exit 0 when every exchange imported, 1 when one did not, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from harness.importer import Imported, ImportFailure
from harness.importer.corpus import CorpusItem, corpus_items, import_corpus
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions, default_frontends
from harness.trace import CaseResult

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = Path(os.environ.get("CONFORMANCE_CORPUS", REPO.parent / "shared" / "corpus"))
SHORT = {
    "pass": "pass",
    "proxy_bug_request": "bug:req",
    "proxy_bug_response": "bug:resp",
    "backend_issue": "backend",
    "baseline_issue": "baseline",
    "unsupported": "unsup",
    "harness_error": "harness",
}


def run_matrix(
    out: Path, imported: Sequence[tuple[CorpusItem, Imported]], *, reports: Path | None = None, jobs: int = 2
) -> list[CaseResult]:
    """Every frontend translated into each imported case's recorded backend, one matrix run per backend."""
    by_backend: dict[str, list[str]] = {}
    for _, case in imported:
        by_backend.setdefault(case.backend, []).append(case.scenario.id)
    results: list[CaseResult] = []
    for backend, ids in sorted(by_backend.items()):
        options = MatrixOptions(
            scenarios=out / "scenarios",
            cassettes=out / "cassettes",
            reports=reports or out / "reports",
            backends=[backend],
            only=ids,
            jobs=jobs,
            known=out / "no-known-failures.toml",
            run_id=f"corpus-{backend}",
            write_traces=reports is not None,
        )
        engine = Engine(options)
        engine.run()
        results += engine.results
    return results


def table(imported: Sequence[tuple[CorpusItem, Imported | ImportFailure]], results: Sequence[CaseResult]) -> list[str]:
    """The Markdown table: exchange, backend, whose view, one verdict per frontend."""
    frontends = default_frontends()
    verdicts = {(r.scenario, r.frontend): r.verdict.value for r in results}
    lines = [
        f"| exchange | backend | expectations from | {' | '.join(frontends)} |",
        "|---|---|---|" + "---|" * len(frontends),
    ]
    for item, case in imported:
        if isinstance(case, ImportFailure):
            lines.append(f"| `{item.label}` | {item.protocol} | import failed: {case} |" + " |" * len(frontends))
            continue
        cells = [SHORT.get(verdicts.get((case.scenario.id, f), "-"), "-") for f in frontends]
        lines.append(f"| `{item.label}` | {case.backend} | {case.view} | {' | '.join(cells)} |")
    return lines


def totals(imported: Sequence[tuple[CorpusItem, Imported | ImportFailure]], results: Sequence[CaseResult]) -> list[str]:
    """How many exchanges pass to every frontend, and the verdict counts."""
    by_scenario: dict[str, list[str]] = {}
    for r in results:
        by_scenario.setdefault(r.scenario, []).append(r.verdict.value)
    cases = [c for _, c in imported if isinstance(c, Imported)]
    every = sum(1 for c in cases if by_scenario.get(c.scenario.id) and set(by_scenario[c.scenario.id]) == {"pass"})
    runnable = sum(
        1
        for c in cases
        if by_scenario.get(c.scenario.id) and set(by_scenario[c.scenario.id]) <= {"pass", "unsupported"}
    )
    counts = Counter(r.verdict.value for r in results)
    return [
        f"exchanges: {len(imported)}, imported: {len(cases)}",
        f"pass to every frontend: {every}; pass wherever the case can run (the rest unsupported): {runnable}",
        "cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
    ]


def details(results: Sequence[CaseResult]) -> list[str]:
    """Every case that did not pass, with its reason and first divergence."""
    out = []
    for r in results:
        if r.verdict.value == "pass":
            continue
        d = r.first_divergence
        where = f" [at {d.path}: {d.left!r} != {d.right!r}]" if d else ""
        out.append(f"- {r.case_id}: {r.verdict.value}: {r.reason}{where}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Import, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="corpus root (default: %(default)s)")
    parser.add_argument("--out", type=Path, help="scratch folder for scenarios and cassettes (default: a temp dir)")
    parser.add_argument("--file", action="append", help="only this corpus file (relative path; repeatable)")
    parser.add_argument("--reports", type=Path, help="write each backend's report under this folder")
    parser.add_argument("--details", action="store_true", help="list the reason of every case that did not pass")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        sys.stderr.write(f"corpus_matrix: no corpus at {args.corpus} (set CONFORMANCE_CORPUS or --corpus)\n")
        return 2
    with tempfile.TemporaryDirectory(prefix="corpus-matrix-") as scratch:
        out = args.out or Path(scratch)
        items = corpus_items(args.corpus, args.file)
        imported = import_corpus(
            args.corpus, items, scenarios=out / "scenarios", cassettes=out / "cassettes", backends=default_frontends()
        )
        good = [(i, c) for i, c in imported if isinstance(c, Imported)]
        results = run_matrix(out, good, reports=args.reports)
        lines = [*table(imported, results), "", *totals(imported, results)]
        if args.details:
            lines += ["", *details(results)]
        sys.stdout.write("\n".join(lines) + "\n")
    return 0 if len(good) == len(imported) else 1


if __name__ == "__main__":
    sys.exit(main())
