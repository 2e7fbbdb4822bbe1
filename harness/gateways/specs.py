"""The real gateways the project gates (`conformance gateway NAME`, `nox -s gateway-NAME`): the pinned version,
how each is started on loopback from its install and its generated config, and when it is ready. Which protocols
a gateway serves to clients and which upstreams it can name are in its names table (`names.NAMES`), so a profile
added later (an OpenAI-compatible provider) is gated without a change here.

Installs live outside the harness: LiteLLM in the Python environment that runs the gate (its `litellm` script),
the npm gateways in `gateways/<name>/node_modules` (pinned by the committed `package.json` and `package-lock.json`).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.gateways.configs import NULLPLATFORM_PORT_ENV, NULLPLATFORM_SUT_PATH
from harness.gateways.launch import Launch
from harness.gateways.names import naming
from harness.plumbing.keys import planted_key
from harness.protocols import registry


class GatewayInstallError(LookupError):
    """The gateway's executable or install is missing; says how to install it."""


@dataclass(frozen=True)
class GatewaySpec:
    """One real gateway: what to install and how to run it for a gate."""

    name: str
    """Its name in the protocol facts, the config format and the nox session (`gateway-<name>`)."""
    package: str
    """Registry package, pinned exactly (`litellm[proxy]==...`, `@scope/name@version`)."""
    version: str
    """The pinned version."""
    config_file: str
    """Where the generated config goes, relative to the run's folder ("" : none, headers only)."""
    argv: tuple[str, ...]
    """Command line; `{bin}` the executable, `{home}` the install folder, `{config}` the config file, `{port}`."""
    ready_path: str
    """A GET that answers 200 once it serves (never one that calls the upstreams)."""
    install_hint: str
    """How to install it, for the error when it is missing."""
    executable: str
    """The program `{bin}` stands for (looked up next to this Python first, then on PATH)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables it needs for a gate (offline, quiet, no retries of its own)."""
    home_is_run_dir: bool = False
    """HOME points at the run's folder (a gateway that reads its config from `$HOME`)."""
    port_env: str | None = None
    """A variable that gives it the port, when the command line cannot."""
    names_from: str = ""
    """The gateway whose names in the protocols' facts it uses, and whose config format (empty: its own name): a
    second route of one gateway (LiteLLM's `/v1/responses`) is configured like the first."""
    serves: tuple[str, ...] = ()
    """The frontends it is gated on, when not every one the facts say it serves (a route of its own)."""
    upstreams: tuple[str, ...] = ()
    """The upstreams it is gated on, when not every one it can name (those its route translates to)."""
    key_env: str | None = None
    """A variable it reads its upstream key from: set to the planted key (a config that cannot name a variable)."""
    cwd_is_run_dir: bool = False
    """It runs in the run's folder (a gateway that reads its config from, or writes its state to, its cwd)."""
    pace_ms: float = 0.0
    """The replay server's `--pace` when the gate names none: a gateway whose stream race kills it on back-to-back
    chunks is gated paced, so its translation is judged at all (the race is reproduced with `--pace 0`)."""
    sut_path: str = ""
    """The path the SDKs are pointed at under its root, with `--sut` URL placeholders (a gateway that serves each
    client protocol or route under a path of its own)."""

    @property
    def naming(self) -> str:
        """Its name in the protocols' facts and its config format."""
        return self.names_from or self.name

    def frontends(self) -> list[str]:
        """The protocols it serves to clients that have an SDK of their own (`serves`, or from the protocols'
        facts)."""
        if self.serves:
            return list(self.serves)
        return [
            name
            for name in registry.names()
            if registry.facts(name).sdk is not None
            and registry.facts(name).frontend is not None
            and (name_there := naming(self.naming, name)) is not None
            and name_there.frontend
        ]

    def backends(self) -> list[str]:
        """The base protocols it can name as upstreams (a profile of one of them is the same wire to it), or
        `upstreams`."""
        if self.upstreams:
            return list(self.upstreams)
        return [
            name
            for name in registry.names()
            if registry.facts(name).sdk is not None and naming(self.naming, name) is not None
        ]

    def program(self) -> str:
        """The executable's path; GatewayInstallError when it is not installed."""
        local = Path(sys.executable).with_name(self.executable)
        found = str(local) if local.is_file() else shutil.which(self.executable)
        if found is None:
            raise GatewayInstallError(f"{self.name}: {self.executable!r} not found; {self.install_hint}")
        return found

    def launch(
        self, home: Path, run_dir: Path, port: int, env: Mapping[str, str], *, ready_seconds: float = 120.0
    ) -> Launch:
        """How to start it from the install in `home`, its config in `run_dir`, on 127.0.0.1:`port`."""
        values = {
            "{bin}": self.program(),
            "{home}": str(home.resolve()),
            "{config}": str((run_dir / self.config_file).resolve()),
            "{port}": str(port),
        }
        argv = []
        for arg in self.argv:
            for key, value in values.items():
                arg = arg.replace(key, value)
            argv.append(arg)
        extra = {**self.env, **env}
        if self.home_is_run_dir:
            extra["HOME"] = str(run_dir.resolve())
        if self.port_env:
            extra[self.port_env] = str(port)
        if self.key_env:
            extra[self.key_env] = planted_key()
        return Launch(
            argv=tuple(argv),
            ready_url=f"http://127.0.0.1:{port}{self.ready_path}",
            log=run_dir / f"{self.name}.log",
            cwd=run_dir if self.cwd_is_run_dir else home,
            env=extra,
            ready_seconds=ready_seconds,
        )


LITELLM = GatewaySpec(
    name="litellm",
    package="litellm[proxy]==1.106.2",
    version="1.106.2",
    config_file="litellm.yaml",
    argv=("{bin}", "--config", "{config}", "--host", "127.0.0.1", "--port", "{port}", "--num_workers", "1"),
    ready_path="/health/liveliness",  # `/health` calls every upstream
    install_hint="pip install 'litellm[proxy]==1.106.2' (nox -s gateway-litellm does)",
    executable="litellm",
    env={
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # the cost map ships with the package: no download
        "LITELLM_LOG": "ERROR",
        "LITELLM_TELEMETRY": "False",
        "DISABLE_SCHEMA_UPDATE": "true",
        "NO_DOCS": "True",
    },
)
"""LiteLLM proxy: its own `--host`; the master key and the gate's router settings are in the generated YAML."""

PORTKEY = GatewaySpec(
    name="portkey",
    package="@portkey-ai/gateway@1.15.2",
    version="1.15.2",
    config_file="",
    # Portkey binds every interface and has no host option: loopback.mjs makes its server listen on 127.0.0.1.
    # `--port=N` with the equals sign (`--port N` is ignored).
    argv=(
        "{bin}",
        "--import",
        "{home}/loopback.mjs",
        "{home}/node_modules/@portkey-ai/gateway/build/start-server.js",
        "--port={port}",
        "--headless",
    ),
    ready_path="/",
    install_hint="run `npm ci` in gateways/portkey (nox -s gateway-portkey does)",
    executable="node",
)
"""Portkey AI Gateway: no config file, each request carries its upstream (`x-portkey-config`)."""

CCR = GatewaySpec(
    name="ccr",
    package="@musistudio/claude-code-router@2.0.0",
    version="2.0.0",
    config_file=".claude-code-router/config.json",
    # `ccr start` serves in the foreground (`ccr restart` would spawn a detached server).
    argv=("{bin}", "{home}/node_modules/@musistudio/claude-code-router/dist/cli.js", "start"),
    ready_path="/health",
    install_hint="run `npm ci` in gateways/ccr (nox -s gateway-ccr does)",
    executable="node",
    env={"CI": "true"},
    home_is_run_dir=True,  # it reads $HOME/.claude-code-router/config.json
    port_env="SERVICE_PORT",
)
"""claude-code-router 2.0.0 (3.x does not install from the registry)."""

LITELLM_RESPONSES = GatewaySpec(
    name="litellm-responses",
    package=LITELLM.package,
    version=LITELLM.version,
    config_file="litellm.yaml",
    argv=LITELLM.argv,
    ready_path=LITELLM.ready_path,
    install_hint="pip install 'litellm[proxy]==1.106.2' (nox -s gateway-litellm-responses does)",
    executable=LITELLM.executable,
    env=LITELLM.env,
    names_from="litellm",
    serves=("responses",),
    # Its `/v1/responses` route translates for the providers without a Responses API of their own; an `openai/`
    # model gets the request forwarded to {api_base}/responses as it came (no translation to judge).
    upstreams=("anthropic", "gemini", "ollama"),
)
"""LiteLLM proxy's own `/v1/responses` route (the same pinned install and config as `litellm`), in front of the
providers it translates the Responses API for."""

CODEX_ROSETTA = GatewaySpec(
    name="codex-rosetta",
    package="codex-rosetta==0.1.0",
    version="0.1.0",
    config_file=".env",
    argv=("{bin}",),  # uvicorn in the foreground, host and port from the environment
    ready_path="/health",
    install_hint="pip install 'codex-rosetta==0.1.0' (nox -s gateway-codex-rosetta does)",
    executable="codex-rosetta",
    env={"HOST": "127.0.0.1", "LOG_LEVEL": "WARNING", "AUDIT_ENABLED": "false", "WEB_SEARCH_ENABLED": "false"},
    port_env="PORT",
    key_env="UPSTREAM_API_KEY",
    cwd_is_run_dir=True,  # it reads .env and writes data/ (keys, search providers) in its working directory
    serves=("responses",),
)
"""codex-rosetta: the Responses API (Codex's) in front of one Chat Completions upstream, configured by a `.env`."""

MLFLOW = GatewaySpec(
    name="mlflow",
    package="mlflow[gateway]==3.17.2",
    version="3.17.2",
    config_file="mlflow-gateway.yaml",
    argv=(
        "{bin}",
        "gateway",
        "start",
        "--config-path",
        "{config}",
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "--workers",
        "1",
    ),
    ready_path="/health",
    install_hint="pip install 'mlflow[gateway]==3.17.2' (nox -s gateway-mlflow does; 3.18.0 does not install)",
    executable="mlflow",
    env={"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"},
)
"""MLflow AI Gateway (`mlflow gateway start`, the YAML-configured one): OpenAI clients on /v1/chat/completions,
the endpoint named by the model."""

NULLPLATFORM = GatewaySpec(
    name="nullplatform",
    package="@nullplatform/llm-gateway@2.0.11",
    version="2.0.11",
    config_file="llm-gateway.yaml",
    argv=("{bin}", "{home}/node_modules/@nullplatform/llm-gateway/dist/cli.js", "start", "-c", "{config}"),
    ready_path="/health",
    install_hint="run `npm ci` in gateways/nullplatform (nox -s gateway-nullplatform does)",
    executable="node",
    port_env=NULLPLATFORM_PORT_ENV,  # its config reads it: the port has no option of its own
    pace_ms=20.0,  # back to back, its OpenAI stream handler writes after the end and the process exits (NP1)
    sut_path=NULLPLATFORM_SUT_PATH,
)
"""nullplatform's LLM Gateway: a project per route, OpenAI clients under `/openai`, Anthropic ones under
`/anthropic`."""

GATEWAYS: Mapping[str, GatewaySpec] = {
    g.name: g for g in (LITELLM, PORTKEY, CCR, LITELLM_RESPONSES, CODEX_ROSETTA, MLFLOW, NULLPLATFORM)
}
"""The gated gateways by name."""


def gateway(name: str) -> GatewaySpec:
    """A gateway by name; KeyError names the known ones."""
    try:
        return GATEWAYS[name]
    except KeyError:
        raise KeyError(f"no gateway named {name!r} (known: {', '.join(GATEWAYS)})") from None
