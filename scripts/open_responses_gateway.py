"""The Open Responses compliance suite against a real Responses gateway, its upstream the generic reference backend.

    OPENRESPONSES_DIR=<checkout> python scripts/open_responses_gateway.py litellm --backend anthropic
    OPENRESPONSES_DIR=<checkout> python scripts/open_responses_gateway.py codex-rosetta

`nox -s open-responses` runs the suite against the built-in proxy; this runs it against LiteLLM's `/v1/responses`
(before anthropic, gemini or ollama) or codex-rosetta (before an OpenAI Chat upstream), from the pinned install on
PATH (`litellm`, `codex-rosetta`: as `nox -s gateway-<name>` installs them). The reference backend answers every
request with the generic reply (`harness.backends.generic`) on 127.0.0.1; the gateway is configured with one model,
the suite's, pointed at it, started on a free loopback port, and stopped by its process group. Every wait has a
timeout. Prints the suite's count and each failure; writes the suite's JSON to `--out`. Exit 0 when every test
passed, 1 when one failed, 2 when it could not run. docs/gateways.md says what it found and which of it the gate's
own checks agree with.
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
import time
from pathlib import Path

import httpx2

from harness.gateways.launch import free_port
from harness.interop.open_responses import (
    MODEL,
    SuiteError,
    backend_app,
    cache_dir,
    install_runtime,
    result_of,
    run_suite,
    suite_command,
    suite_dir,
)
from harness.proxy.server import ServerThread

READY_SECONDS = 120.0
STOP_SECONDS = 10.0
CLIENT_KEY = "sk-conformance-client"
UPSTREAM_KEY = "sk-conformance-upstream"
LITELLM_MODELS = {
    "anthropic": ("anthropic/claude-sonnet-4-5", ""),
    "gemini": ("gemini/gemini-2.5-flash", "/v1beta"),
    "ollama": ("ollama_chat/llama3.2", ""),
}
"""LiteLLM's model and the api_base suffix per upstream (it appends the rest itself, as `sut-config` writes it)."""


def _litellm(folder: Path, upstream: str, backend: str, port: int) -> tuple[list[str], dict[str, str], str]:
    model, suffix = LITELLM_MODELS[backend]
    config = folder / "litellm.yaml"
    config.write_text(
        "general_settings:\n"
        '  master_key: "os.environ/CONFORMANCE_CLIENT_KEY"\n'
        "router_settings:\n  disable_cooldowns: true\n  num_retries: 0\n"
        "litellm_settings:\n  num_retries: 0\n  request_timeout: 60\n"
        f"model_list:\n  - model_name: {MODEL}\n    litellm_params:\n      model: {model}\n"
        f"      api_base: {upstream}/{backend}{suffix}\n      api_key: os.environ/CONFORMANCE_PLANTED_KEY\n",
        encoding="utf-8",
    )
    env = {
        "CONFORMANCE_CLIENT_KEY": CLIENT_KEY,
        "CONFORMANCE_PLANTED_KEY": UPSTREAM_KEY,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_LOG": "ERROR",
        "LITELLM_TELEMETRY": "False",
        "DISABLE_SCHEMA_UPDATE": "true",
        "NO_DOCS": "True",
    }
    argv = [_program("litellm"), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    return [*argv, "--num_workers", "1"], env, f"http://127.0.0.1:{port}/health/liveliness"


def _rosetta(folder: Path, upstream: str, backend: str, port: int) -> tuple[list[str], dict[str, str], str]:
    if backend != "openai":
        raise SuiteError("codex-rosetta takes an OpenAI Chat upstream only (--backend openai)")
    (folder / ".env").write_text(
        f"UPSTREAM_BASE_URL={upstream}/openai/v1\nUPSTREAM_PROVIDER=openai\nUPSTREAM_TIMEOUT_READ=60\n",
        encoding="utf-8",
    )
    env = {
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "UPSTREAM_API_KEY": UPSTREAM_KEY,
        "LOG_LEVEL": "WARNING",
        "AUDIT_ENABLED": "false",
        "WEB_SEARCH_ENABLED": "false",
    }
    return [_program("codex-rosetta")], env, f"http://127.0.0.1:{port}/health"


GATEWAYS = {"litellm": _litellm, "codex-rosetta": _rosetta}


def _program(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise SuiteError(f"{name!r} is not on PATH: install it pinned (gateways/<name>/requirements.txt)")
    return found


def _wait_ready(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SuiteError(f"the gateway exited with code {process.returncode} before it was ready")
        try:
            if httpx2.get(url, timeout=2.0).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.5)
    raise SuiteError(f"the gateway was not ready within {READY_SECONDS:g} s ({url})")


def _stop(process: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(STOP_SECONDS)
            return
        except subprocess.TimeoutExpired:
            continue


def gate(gateway: str, backend: str, out: Path | None) -> int:
    """Run the suite against `gateway` before the generic `backend`; the exit code."""
    suite, modules = suite_dir(), install_runtime(cache_dir())
    with (
        tempfile.TemporaryDirectory(prefix=f"openresponses-{gateway}-") as tmp,
        ServerThread(backend_app(backend)) as upstream,
    ):
        folder, port = Path(tmp), free_port()
        argv, env, ready = GATEWAYS[gateway](folder, upstream.url, backend, port)
        with (folder / "gateway.log").open("wb") as log:
            process = subprocess.Popen(
                argv, cwd=folder, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
            try:
                _wait_ready(ready, process)
                command = suite_command(suite, modules, f"http://127.0.0.1:{port}")
                command = [CLIENT_KEY if part == "unused" else part for part in command]
                found = run_suite(command, suite, modules)
            finally:
                _stop(process)
    if out is not None:
        out.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    result = result_of(backend, found)
    print(f"{gateway} before {backend}: {result.passed} of {result.total} passed, {result.failed} failed")  # noqa: T201
    for test, errors in result.failures.items():
        print(f"  {test}: {'; '.join(errors)[:300]}")  # noqa: T201
    return 0 if result.failed == 0 and result.total > 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gateway", choices=sorted(GATEWAYS))
    parser.add_argument("--backend", default="", help="the upstream (litellm: anthropic, gemini, ollama)")
    parser.add_argument("--out", type=Path, help="write the suite's JSON here")
    args = parser.parse_args()
    backend = args.backend or ("openai" if args.gateway == "codex-rosetta" else "anthropic")
    try:
        return gate(args.gateway, backend, args.out)
    except (SuiteError, OSError, KeyError) as exc:
        print(f"open_responses_gateway: {exc}", file=sys.stderr)  # noqa: T201
        return 2


if __name__ == "__main__":
    sys.exit(main())
