"""`conformance init [DIR]`: scaffold a team's repository to gate its own proxy: `conformance/scenarios/` (one
example scenario), `conformance/cassettes/` (its reference recordings), `conformance/known.toml` and a GitHub
Actions workflow that installs the harness, starts the team's proxy, waits for it, gates it and uploads the
report. Nothing is overwritten without --force."""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

from harness import __version__
from harness.cli import EXIT_OK, EXIT_USAGE, say_error

EXAMPLE = "team-example"
"""The example scenario's id (its file is `conformance/scenarios/team-example.yaml`)."""
PLANTED = "PLANTED-TEST-KEY-0c0ffee0c0ffee0c0ffee0c0"
"""The fake upstream key the workflow plants in the proxy's environment (the replay server checks it arrives)."""

SCENARIO = f"""\
# A scenario of your own, run beside the packaged ones (see them with
# `conformance list scenarios --scenarios conformance/scenarios`; the format is in the harness's
# scenarios/README.md). A file with the id of a packaged scenario replaces it.
# After editing, record its reference answers (offline, no keys):
#   conformance record --backend all --scenarios conformance/scenarios --cassettes conformance/cassettes \\
#     --scenario {EXAMPLE}
id: {EXAMPLE}
description: Example of a team's own case; one user turn, a one-word answer. Replace it with what your users send.
request:
  messages:
    - role: user
      content: [{{kind: text, text: "Which city is the capital of France? Answer in one word."}}]
  max_tokens: 16
reply:
  kind: ok
  id: msg_team_example
  content:
    - {{kind: text, text: "Paris."}}
  stop_reason: {{kind: end_turn}}
  usage: {{input_tokens: 19, output_tokens: 3}}
expect:
  stop_reason: end_turn
  text_equals: "Paris."
  usage_present: true
"""

KNOWN = """\
# Known failures: proxy bugs this team accepts for now. A listed case keeps the gate green while its verdict stays
# the same; one that passes again is reported as fixed. Format:
#
# [[case]]
# id = "text-basic[<frontend>-><backend>,stream]"
# verdict = "proxy_bug_response"          # or proxy_bug_request
# reason = "our proxy drops ...; tracked in #123"
#
# `conformance run ... --known conformance/known.toml --update-known` rewrites it from a run (at a terminal,
# never in CI).
"""

WORKFLOW = f"""\
# Gate our LLM proxy with the conformance harness: every case of the packaged scenarios and of
# conformance/scenarios, through our proxy, against recorded backends (no network, no provider keys).
# Exit 0: no proxy bug beyond conformance/known.toml; 1: a new proxy bug; 2: a setup error (nothing judged).
name: conformance

on:
  pull_request:
  push:
    branches: [main]

jobs:
  gate:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    env:
      SUT_PORT: "8787"          # where our proxy listens
      REPLAY_PORT: "8790"       # where the harness serves the recorded backends (our proxy's upstreams)
      # EDIT: the APIs our proxy serves and the upstream APIs it translates to (comma lists; as generated, every
      # one the harness has: `conformance list providers`).
      FRONTENDS: "{{frontends}}"
      BACKENDS: "{{backends}}"
      CONFORMANCE_PLANTED_KEY: {PLANTED}   # a fake upstream key, not a secret
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - name: Install the conformance harness
        # From the package index; a wheel file or a `git+https://...` URL of the harness installs the same way.
        run: python -m pip install "llm-conformance-harness=={__version__}"
      - name: Write the proxy's routes
        # One route per (scenario, backend) to the replay server. `--format json` lists each route with its
        # upstream URL and path; `--format litellm|louter|ccr|...` writes other gateways' configs.
        run: >-
          conformance sut-config --scenarios conformance/scenarios --cassettes conformance/cassettes
          --backend "$BACKENDS" --replay-url "http://127.0.0.1:$REPLAY_PORT" -o conformance/sut.toml
      - name: Start the proxy under test
        # >>>>>>>> EDIT THIS STEP: start OUR proxy in the background, listening on 127.0.0.1:$SUT_PORT, with the
        # >>>>>>>> routes of the step above (each model name to http://127.0.0.1:$REPLAY_PORT/<backend>, the key
        # >>>>>>>> from $CONFORMANCE_PLANTED_KEY). As generated, it starts the harness's own reference proxy.
        run: |
          conformance serve --config conformance/sut.toml --port "$SUT_PORT" > proxy.log 2>&1 &  # PLACEHOLDER
          echo $! > proxy.pid
      - name: Gate the proxy
        run: >-
          conformance run --sut "http://127.0.0.1:$SUT_PORT" --wait-for-sut 120 --replay-port "$REPLAY_PORT"
          --scenarios conformance/scenarios --cassettes conformance/cassettes --known conformance/known.toml
          --frontend "$FRONTENDS" --backend "$BACKENDS" --run-id ci
      - name: Proxy log
        if: failure()
        run: cat proxy.log
      - name: Upload the report
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: conformance-report
          path: reports/ci/
"""

FILES = {
    Path("conformance/scenarios") / f"{EXAMPLE}.yaml": SCENARIO,
    Path("conformance/known.toml"): KNOWN,
    Path(".github/workflows/conformance.yml"): WORKFLOW,
}
"""What init writes (relative to DIR), besides the example's cassettes."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "init",
        help="scaffold a repository to gate its own proxy (scenarios, cassettes, known failures, CI workflow)",
        description=(
            "Write conformance/scenarios/ (an example scenario), conformance/cassettes/ (its reference recordings), "
            "conformance/known.toml and .github/workflows/conformance.yml (install the harness, start the proxy: "
            "a placeholder step to edit, wait for it, gate it, upload the report). Refuses to overwrite a file "
            "(exit 2) unless --force."
        ),
    )
    p.add_argument("dir", nargs="?", type=Path, default=Path("."), help="the repository's root (default: .)")
    p.add_argument("--force", action="store_true", help="overwrite files that exist")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the files; exit 2 (and write nothing) when one exists and --force is not given."""
    root: Path = args.dir
    if root.exists() and not root.is_dir():
        say_error("init", f"{root}: not a folder")
        return EXIT_USAGE
    cassettes = root / "conformance" / "cassettes"
    existing = [root / p for p in FILES if (root / p).exists()]
    existing += sorted(cassettes.glob(f"*/{EXAMPLE}.*.yaml")) if cassettes.is_dir() else []
    if existing and not args.force:
        more = f" and {len(existing) - 3} more" if len(existing) > 3 else ""
        shown = ", ".join(str(p) for p in existing[:3]) + more
        say_error("init", f"{shown}: exists (--force overwrites); nothing written")
        return EXIT_USAGE
    frontends, backends = _names()
    try:
        for rel, text in FILES.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            text = text.replace("{frontends}", frontends).replace("{backends}", backends)
            (root / rel).write_text(text, encoding="utf-8")
    except OSError as exc:
        say_error("init", f"cannot write in {root}: {exc.strerror}")
        return EXIT_USAGE
    recorded = _record(root)
    if recorded is None:
        return EXIT_USAGE
    for rel in FILES:
        print(f"wrote {root / rel}")  # noqa: T201
    print(f"wrote {recorded} reference cassettes of {EXAMPLE} under {cassettes}")  # noqa: T201
    print("next: edit the 'Start the proxy under test' step of the workflow (marked EDIT), then commit")  # noqa: T201
    return EXIT_OK


def _names() -> tuple[str, str]:
    """Every frontend with an SDK and every backend with packaged recordings, as comma lists."""
    from harness.runner.plan import default_backends, default_frontends
    from harness.scenarios.layers import packaged

    return ",".join(default_frontends()), ",".join(default_backends(packaged("cassettes")))


def _record(root: Path) -> int | None:
    """Record the example's reference cassettes for every backend (offline); their count, None on failure."""
    from harness.cli import main

    scenarios, cassettes = root / "conformance" / "scenarios", root / "conformance" / "cassettes"
    out = io.StringIO()
    args = ["record", "--backend", "all", "--scenarios", str(scenarios), "--cassettes", str(cassettes)]
    with contextlib.redirect_stdout(out):
        code = main([*args, "--scenario", EXAMPLE, "--no-packaged"])
    if code != 0:
        say_error("init", f"recording {EXAMPLE}'s reference cassettes failed (exit {code}): {out.getvalue()[-500:]}")
        return None
    return sum(1 for line in out.getvalue().splitlines() if line.startswith("recorded "))
