"""The Open Responses compliance suite against a real Responses gateway, its upstream the generic reference backend.

    OPENRESPONSES_DIR=<checkout> python scripts/open_responses_gateway.py litellm --backend anthropic
    OPENRESPONSES_DIR=<checkout> python scripts/open_responses_gateway.py codex-rosetta
    OPENRESPONSES_DIR=<checkout> python scripts/open_responses_gateway.py open-responses-server

`nox -s open-responses` runs the suite against the built-in proxy; this runs it against LiteLLM's `/v1/responses`
(before anthropic, gemini or ollama), codex-rosetta or open-responses-server (before an OpenAI Chat upstream), from
the pinned install on PATH (`litellm`, `codex-rosetta`, `otc`: as `nox -s gateway-<name>` installs them). The
reference backend answers every request with the generic reply (`harness.backends.generic`) on 127.0.0.1; the
gateway is configured with one model, the suite's, pointed at it, started on a free loopback port, and stopped by its
process group. Every wait has a timeout. Prints the suite's count and each failure; writes the suite's JSON to
`--out`. Exit 0 when every test passed, 1 when one failed, 2 when it could not run. docs/gateways.md says what it
found and which of it the gate's own checks agree with.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness.gateways import codex_rosetta, litellm, open_responses_server
from harness.gateways.base import GatewayInstallError, GatewaySpec, request_path
from harness.gateways.launch import GatewayStartError, free_port, running
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
from harness.rig.keys import CLIENT_KEY_ENV, PLANTED_KEY_ENV, planted_key

CLIENT_KEY = "sk-conformance-client"
"""The key the suite sends the gateway (LiteLLM's master key)."""
LITELLM_MODELS = {"anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-flash", "ollama": "llama3.2"}
"""The upstream model LiteLLM is configured with, per upstream it translates the Responses API for."""


def _litellm(upstream: str, backend: str) -> str:
    """LiteLLM's config: the gate's settings and one model, the suite's, at the generic backend (its provider prefix
    and api_base as `sut-config --format litellm` writes them)."""
    if backend not in LITELLM_MODELS:
        raise SuiteError(f"litellm's /v1/responses is gated before {', '.join(LITELLM_MODELS)}, not {backend!r}")
    name = litellm.NAMES[backend]
    api_base = f"{upstream}/{backend}" + name.base_path(request_path(backend))
    return (
        litellm.SETTINGS
        + f"model_list:\n  - model_name: {MODEL}\n    litellm_params:\n"
        + f"      model: {name.provider}/{LITELLM_MODELS[backend]}\n      api_base: {api_base}\n"
        + f"      api_key: os.environ/{PLANTED_KEY_ENV}\n"
    )


def _rosetta(upstream: str, backend: str) -> str:
    """codex-rosetta's `.env`, its one Chat Completions upstream the generic backend (it has no model table)."""
    return codex_rosetta.render(upstream, [], [backend], {})


def _ors(upstream: str, backend: str) -> str:
    """open-responses-server's variables, its one Chat Completions upstream the generic backend."""
    return open_responses_server.render(upstream, [], [backend], {})


GATEWAYS: dict[str, tuple[GatewaySpec, Callable[[str, str], str]]] = {
    "litellm": (litellm.RESPONSES, _litellm),
    "codex-rosetta": (codex_rosetta.SPEC, _rosetta),
    "open-responses-server": (open_responses_server.SPEC, _ors),
}
"""Each gateway's spec (its pinned launch) and its config for the suite's one model."""


def gate(gateway: str, backend: str, out: Path | None) -> int:
    """Run the suite against `gateway` before the generic `backend`; the exit code."""
    spec, config = GATEWAYS[gateway]
    suite, modules = suite_dir(), install_runtime(cache_dir())
    keys = {PLANTED_KEY_ENV: planted_key(), CLIENT_KEY_ENV: CLIENT_KEY}
    with (
        tempfile.TemporaryDirectory(prefix=f"openresponses-{gateway}-") as tmp,
        ServerThread(backend_app(backend)) as upstream,
    ):
        folder, port = Path(tmp), free_port()
        (folder / spec.config_file).write_text(config(upstream.url, backend), encoding="utf-8")
        with running(spec.launch(Path.cwd(), folder, port, keys)):
            version = "" if "responses" in spec.unversioned else "/v1"
            command = suite_command(suite, modules, f"http://127.0.0.1:{port}", version=version)
            found = run_suite([CLIENT_KEY if part == "unused" else part for part in command], suite, modules)
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
    backend = args.backend or ("anthropic" if args.gateway == "litellm" else "openai")
    try:
        return gate(args.gateway, backend, args.out)
    except (SuiteError, GatewayInstallError, GatewayStartError, OSError, ValueError) as exc:
        print(f"open_responses_gateway: {exc}", file=sys.stderr)  # noqa: T201
        return 2


if __name__ == "__main__":
    sys.exit(main())
