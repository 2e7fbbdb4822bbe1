"""The Open Responses compliance suite (`bin/compliance-test.ts` of its repository) against the built-in proxy.

    python -m harness.interop.open_responses --backend NAME [--backend NAME ...] [--json FILE]

The suite is not published as a package, so its checkout is named by `OPENRESPONSES_DIR`. Its runtime (a
TypeScript loader and the zod its generated schemas import, pinned exactly in `npm/package-lock.json` beside this
file) is installed with `npm ci` into a cache folder outside the project (`OPENRESPONSES_CACHE`, default
`~/.cache/conformance/openresponses`), once per lock. For each backend, a reference backend answering the
generic reply (`harness.backends.generic`: the suite's prompts are no scenarios) and the proxy translating
`/v1/responses` to it are started on 127.0.0.1 with ephemeral ports, the suite runs under node against the proxy,
and both are stopped. Exit 0 when every test of every backend passed, 1 when one failed, 2 when the suite could not
run (no checkout, npm or node failed, a timeout, no JSON summary).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.backends import WireReply, wire_app
from harness.backends.generic import respond_generic
from harness.protocols import HttpRequest, registry
from harness.proxy import create_app
from harness.proxy.config import ModelRoute, ProxyConfig, UpstreamConfig
from harness.proxy.server import ServerThread

SUITE_ENV = "OPENRESPONSES_DIR"
"""The environment variable naming the suite's checkout."""
CACHE_ENV = "OPENRESPONSES_CACHE"
"""The environment variable naming the folder its npm packages are installed into."""
SUITE_FILE = "bin/compliance-test.ts"
"""The suite's command-line runner, relative to its checkout."""
PINS = Path(__file__).with_name("npm")
"""`package.json` and `package-lock.json`: the suite's runtime, pinned exactly."""
MODEL = "compliance-suite"
"""The model name the suite sends; the proxy routes it to the backend under test."""
SUITE_SECONDS = 300.0
"""Longest a whole suite run may take (its own WebSocket waits are 30 s each)."""
NPM_SECONDS = 300.0
"""Longest `npm ci` may take."""
KILL_SECONDS = 10.0
"""How long a stopped process may take to exit."""


class SuiteError(RuntimeError):
    """The suite could not be run; the message is one line."""


@dataclass
class SuiteResult:
    """One suite run against one backend."""

    backend: str
    passed: int
    failed: int
    skipped: int
    total: int
    failures: dict[str, list[str]] = field(default_factory=dict)
    """Failed test id -> its errors."""


def suite_dir(environ: dict[str, str] | None = None) -> Path:
    """The suite's checkout from `OPENRESPONSES_DIR`; SuiteError unless it holds `bin/compliance-test.ts`."""
    value = (os.environ if environ is None else environ).get(SUITE_ENV, "")
    if not value:
        raise SuiteError(f"{SUITE_ENV} is not set: point it at a checkout of the OpenResponses repository")
    folder = Path(value).expanduser()
    if not (folder / SUITE_FILE).is_file():
        raise SuiteError(
            f"{SUITE_ENV}={value} has no {SUITE_FILE}: point it at a checkout of the OpenResponses repository"
        )
    return folder.resolve()


def cache_dir(environ: dict[str, str] | None = None) -> Path:
    """Where the suite's npm packages go: `OPENRESPONSES_CACHE`, else `~/.cache/conformance/openresponses`."""
    value = (os.environ if environ is None else environ).get(CACHE_ENV, "")
    return Path(value).expanduser() if value else Path.home() / ".cache" / "conformance" / "openresponses"


def install_runtime(cache: Path, pins: Path = PINS) -> Path:
    """`npm ci` of the pinned runtime into `cache` unless it already holds that lock; its `node_modules`."""
    lock = (pins / "package-lock.json").read_bytes()
    modules = cache / "node_modules"
    if (
        (cache / "package-lock.json").is_file()
        and (cache / "package-lock.json").read_bytes() == lock
        and modules.is_dir()
    ):
        return modules
    cache.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(pins / name, cache / name)
    npm = shutil.which("npm")
    if npm is None:
        raise SuiteError("npm is not on PATH: the suite's runtime is installed with npm ci")
    command = [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    try:
        done = subprocess.run(command, cwd=cache, capture_output=True, text=True, timeout=NPM_SECONDS, check=False)
    except subprocess.TimeoutExpired as exc:
        raise SuiteError(f"npm ci in {cache} took over {NPM_SECONDS:g} s") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SuiteError(f"npm ci in {cache} failed ({done.returncode}): {last}")
    return modules


def backend_app(backend: str) -> Any:
    """The reference backend `backend` answering every request with the generic reply."""

    def reply(name: str, request: HttpRequest) -> WireReply:
        return respond_generic(registry.get(name), request)

    return wire_app([backend], reply)


def proxy_config(backend: str, backend_url: str) -> ProxyConfig:
    """The proxy's config: `MODEL` translated to `backend`, served at `backend_url/<backend>`."""
    upstream = UpstreamConfig(name=backend, protocol=backend, base_url=f"{backend_url}/{backend}")
    return ProxyConfig(models=(ModelRoute(name=MODEL, mode="translate", upstream=upstream, upstream_model=MODEL),))


@contextmanager
def serving(backend: str) -> Iterator[str]:
    """The reference backend and the proxy before it, on 127.0.0.1 with ephemeral ports; yields the proxy's URL."""
    with (
        ServerThread(backend_app(backend)) as upstream,
        ServerThread(create_app(proxy_config(backend, upstream.url))) as proxy,
    ):
        yield proxy.url


def suite_command(suite: Path, modules: Path, base_url: str, *, version: str = "/v1") -> list[str]:
    """node running the suite with the pinned loader, WebSocket on (node 20 has it behind a flag), JSON out; the
    suite's base URL is `base_url` + `version` (empty for a server that serves `/responses` at its root)."""
    node = shutil.which("node")
    if node is None:
        raise SuiteError("node is not on PATH: the suite runs under node 20 or later")
    loader = (modules / "tsx" / "dist" / "loader.mjs").as_uri()
    options = ["--experimental-websocket"] if _node_major(node) < 22 else []
    runner = [str(suite / SUITE_FILE), "--base-url", f"{base_url}{version}", "--api-key", "unused", "--model", MODEL]
    return [node, *options, "--import", loader, *runner, "--json"]


def _node_major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=KILL_SECONDS, check=True)
    except (subprocess.SubprocessError, OSError) as exc:
        raise SuiteError(f"{node} --version failed: {exc}") from exc
    return int(out.stdout.strip().lstrip("v").split(".")[0])


def _stop(process: subprocess.Popen[str]) -> None:
    """Stop the suite's process group (this driver started it in a session of its own) and close its pipes."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.communicate(timeout=KILL_SECONDS)
            return
        except subprocess.TimeoutExpired:
            continue
    process.communicate(timeout=KILL_SECONDS)


def run_suite(command: Sequence[str], suite: Path, modules: Path, timeout: float = SUITE_SECONDS) -> dict[str, Any]:
    """Run the suite; its JSON output. SuiteError on a timeout or when it prints no JSON summary."""
    env = {**os.environ, "NODE_PATH": str(modules), "NO_COLOR": "1"}
    # Its JSON goes to a file, not a pipe: node's process.exit() drops what a pipe has not taken yet (past 64 KiB,
    # as a suite with many failures prints), while writes to a file are synchronous.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as sink:
        process = subprocess.Popen(
            list(command), cwd=suite, env=env, stdout=sink, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )  # fmt: skip
        try:
            _, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            _stop(process)
            raise SuiteError(f"the suite did not finish within {timeout:g} s") from exc
        sink.seek(0)
        stdout = sink.read()
    try:
        out: dict[str, Any] = json.loads(stdout)
    except json.JSONDecodeError as exc:
        last = (stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SuiteError(f"the suite printed no JSON summary (exit {process.returncode}): {last}") from exc
    return out


def result_of(backend: str, out: dict[str, Any]) -> SuiteResult:
    """The counts and failures of the suite's JSON output."""
    summary = out.get("summary")
    if not isinstance(summary, dict):
        raise SuiteError("the suite's JSON has no summary")
    failures = {
        str(r.get("id")): [str(e) for e in r.get("errors") or []]
        for r in out.get("results", [])
        if isinstance(r, dict) and r.get("status") == "failed"
    }
    counts = {k: int(summary.get(k, 0)) for k in ("passed", "failed", "skipped", "total")}
    return SuiteResult(backend, failures=failures, **counts)


def run_backend(backend: str, suite: Path, modules: Path) -> SuiteResult:
    """The suite against the proxy before `backend`."""
    with serving(backend) as url:
        return result_of(backend, run_suite(suite_command(suite, modules, url), suite, modules))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite before each backend; print one line per backend and each failure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", action="append", required=True, help="backend protocol (repeatable)")
    parser.add_argument("--json", type=Path, help="also write every backend's results here")
    args = parser.parse_args(argv)
    try:
        unknown = [b for b in args.backend if b not in registry.names()]
        if unknown:
            raise SuiteError(f"unknown backend {unknown[0]!r}; known: {', '.join(registry.names())}")
        suite = suite_dir()
        modules = install_runtime(cache_dir())
        results = [run_backend(b, suite, modules) for b in args.backend]
    except (SuiteError, OSError) as exc:
        print(f"openresponses: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    for r in results:
        print(f"{r.backend}: {r.passed} of {r.total} passed, {r.failed} failed, {r.skipped} skipped")  # noqa: T201
        for test, errors in r.failures.items():
            print(f"  {test}: {'; '.join(errors)[:400]}")  # noqa: T201
    if args.json is not None:
        args.json.write_text(json.dumps([r.__dict__ for r in results], indent=2) + "\n", encoding="utf-8")
    return 0 if all(r.failed == 0 and r.total > 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
