"""Do two conformance runs give the same verdicts? For refactors that must not change behaviour.

    python scripts/same_verdicts.py reports/before reports/after [--checks]

Compares each case of the two runs' `summary.json`: the set of case ids, and per case the verdict, reason, first
divergence path and known-failure note. With `--checks` it also compares every case trace (`cases/`: case files,
plain or gzip-compressed, and packs of JSON lines): each
run's status, error, failed checks and grammar violations, and every request- and response-side divergence.
Prints each difference; exit 0 when there is none, 1 when there are some, 2 when a run cannot be read.
Standard library only, so it runs against any two report folders.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

SUMMARY_FIELDS = ("verdict", "reason", "first_divergence", "known")


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"same_verdicts: cannot read {path}: {exc}") from exc


def summary_differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Differences between two summaries, case by case."""
    a = {c["case_id"]: c for c in before["cases"]}
    b = {c["case_id"]: c for c in after["cases"]}
    out = [f"only before: {case_id}" for case_id in sorted(a.keys() - b.keys())]
    out += [f"only after: {case_id}" for case_id in sorted(b.keys() - a.keys())]
    for case_id in sorted(a.keys() & b.keys()):
        for key in SUMMARY_FIELDS:
            if a[case_id].get(key) != b[case_id].get(key):
                out.append(f"{case_id}: {key} {a[case_id].get(key)!r} -> {b[case_id].get(key)!r}")
    return out


def _run_facts(run: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": run["status"],
        "error": run.get("error"),
        "failed_checks": sorted(c["name"] for c in run["checks"] if not c["passed"]),
        "grammar": run["grammar"],
    }


def _traces(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Every case trace of a run's `cases` folder, by case id."""
    out = {}
    for path in sorted((run_dir / "cases").iterdir()) if (run_dir / "cases").is_dir() else []:
        try:
            data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
            texts = data.splitlines() if path.name.endswith(".jsonl.gz") else [data]
            for text in texts:
                trace = json.loads(text)
                out[trace["case_id"]] = trace
        except (OSError, EOFError, gzip.BadGzipFile, json.JSONDecodeError, KeyError) as exc:
            raise SystemExit(f"same_verdicts: cannot read {path}: {exc}") from exc
    return out


def trace_differences(before: Path, after: Path) -> list[str]:
    """Differences between the case traces of two runs: runs' outcomes and every divergence."""
    out = []
    traces_after = _traces(after)
    for case_id, a in _traces(before).items():
        b = traces_after.get(case_id)
        if b is None:
            out.append(f"only before: trace of {case_id}")
            continue
        for key in ("request_divergences", "response_divergences"):
            if a[key] != b[key]:
                out.append(f"{a['case_id']}: {key} differ")
        runs_a = {role: _run_facts(run) for role, run in a["runs"].items()}
        runs_b = {role: _run_facts(run) for role, run in b["runs"].items()}
        if runs_a != runs_b:
            out.append(f"{a['case_id']}: runs {runs_a} -> {runs_b}")
    return out


def main(argv: list[str] | None = None) -> int:
    """Compare and print; the exit code says whether the runs agree."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path, help="report folder of the reference run")
    parser.add_argument("after", type=Path, help="report folder of the run to check")
    parser.add_argument("--checks", action="store_true", help="also compare every case trace")
    args = parser.parse_args(argv)
    before, after = _load(args.before / "summary.json"), _load(args.after / "summary.json")
    found = summary_differences(before, after)
    if args.checks:
        found += trace_differences(args.before, args.after)
    for line in found:
        sys.stdout.write(line + "\n")
    sys.stdout.write(f"{len(before['cases'])} vs {len(after['cases'])} cases: {len(found)} difference(s)\n")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
