"""What one case's trace costs for a huge answer: write a scenario whose text answer is N MB, record its openai
cassette from the reference backend, run openai -> openai with `--keep-traces all`, and print the trace's size
(uncompressed and on disk) and what the bound cut. Everything goes to a fresh temporary folder. Run it from a
checkout of this repository (it runs `python -m harness`).

    python scripts/huge_answer.py --mb 10.8 [--stream]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

WORDS = "lorem ipsum dolor sit amet "


def main() -> None:
    """Build, record, run, measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=10.8, help="size of the answer's text in MB")
    parser.add_argument("--stream", action="store_true", help="a streamed answer (slow past 1 MB: a chunk a word)")
    args = parser.parse_args()
    streaming = "stream" if args.stream else "nonstream"
    text = WORDS * max(1, int(args.mb * 1_000_000 / len(WORDS)))
    with tempfile.TemporaryDirectory(prefix="huge-answer-") as tmp:
        root = Path(tmp)
        (root / "scenarios").mkdir()
        scenario = {
            "id": "huge-answer",
            "description": "A huge text answer.",
            "request": {"messages": [{"role": "user", "content": [{"kind": "text", "text": "Write a lot."}]}]},
            "reply": {
                "kind": "ok",
                "id": "msg_huge",
                "content": [{"kind": "text", "text": text}],
                "stop_reason": {"kind": "end_turn"},
                "usage": {"input_tokens": 5, "output_tokens": len(text) // 5},
            },
            "expect": {"stop_reason": "end_turn", "usage_present": True},
        }
        (root / "scenarios" / "huge-answer.yaml").write_text(yaml.safe_dump(scenario, width=10**9))
        folders = ["--scenarios", "scenarios", "--cassettes", "cassettes"]
        conformance = [sys.executable, "-m", "harness"]
        record = [*conformance, "record", "--backend", "openai", *folders, "--streaming", streaming]
        subprocess.run(record, cwd=root, check=True, stdout=subprocess.DEVNULL, timeout=3600)
        run = [*conformance, "run", *folders, "--no-packaged", "--frontend", "openai", "--backend", "openai"]
        run += ["--streaming", streaming, "--keep-traces", "all", "--reports", "reports", "--run-id", "h", "-q"]
        subprocess.run(run, cwd=root, check=False, stdout=subprocess.DEVNULL, timeout=3600)  # the gate's verdict
        (trace,) = (root / "reports" / "h" / "cases").glob("*.json*")  # its own file, or its unit's pack if it passed
        data = gzip.decompress(trace.read_bytes())
        case = json.loads(data.splitlines()[0] if trace.name.endswith(".jsonl.gz") else data)
        print(f"answer {len(text):,} characters ({streaming}): {case['verdict']}, {case['reason']}")  # noqa: T201
        print(f"trace {len(data):,} bytes uncompressed, {trace.stat().st_size:,} bytes on disk")  # noqa: T201
        for line in case.get("cut", []):
            print(f"cut: {line}")  # noqa: T201


if __name__ == "__main__":
    main()
