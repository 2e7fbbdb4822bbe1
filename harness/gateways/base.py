"""What every gateway module (`harness/gateways/<name>.py`) is built from: how a gateway names a protocol
(`GatewayName`), how it is installed and run for a gate (`GatewaySpec`), and the pieces its config renderer
shares with the others. A gateway's own knowledge (its names, its config format, its launch) lives in its module;
`names.py`, `configs.py` and `specs.py` only gather the modules.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness import ir
from harness.gateways.launch import Launch
from harness.protocols import registry
from harness.rig import RouteSpec, route_table
from harness.rig.keys import planted_key
from harness.scenarios.model import Scenario


@dataclass(frozen=True)
class GatewayName:
    """How one known gateway names a protocol in its config, and whether it serves it to clients."""

    provider: str
    """The gateway's name for the protocol (LiteLLM's model prefix, Louter's backend `type`, Portkey's provider,
    claude-code-router's transformer)."""
    appends: str = ""
    """What the gateway appends to the configured base URL itself: the upstream base URL is the codec's request
    path cut where this begins (empty: the base URL is the backend root)."""
    note: str = ""
    """What a user of the generated config should know about this gateway and protocol (printed as a comment)."""
    endpoint: bool = False
    """The configured URL runs through `appends` (claude-code-router takes the whole endpoint, or the Gemini
    `models/` folder it appends the model and method to)."""
    frontend: bool = False
    """The gateway also serves this protocol to its clients (its gate drives this protocol's SDK at it)."""

    def base_path(self, request_path: str) -> str:
        """The part of the codec's request path the gateway's configured base URL must end with."""
        if not self.appends:
            return ""
        cut = request_path.find(self.appends)
        if cut < 0:
            return ""
        return request_path[: cut + len(self.appends)] if self.endpoint else request_path[:cut]


def naming_in(table: Mapping[str, GatewayName], protocol: str) -> GatewayName | None:
    """How a gateway whose names are `table` names `protocol` (None: it does not). A provider profile is named as
    its family is, unless its facts say a gateway config cannot reach it (`ProtocolFacts.gateway_upstream`)."""
    if protocol in table:
        return table[protocol]
    if not registry.facts(protocol).gateway_upstream:
        return None
    return table.get(registry.get(protocol).family)


def named(gateway: str, table: Mapping[str, GatewayName], backend: str) -> GatewayName:
    """How `gateway` (whose names are `table`) names `backend`; ValueError when it has no name for it."""
    name = naming_in(table, backend)
    if name is None:
        raise ValueError(f"{gateway} has no name for {backend}'s protocol (harness/gateways/{gateway}.py)")
    return name


def routes(
    scenarios: Sequence[Scenario], backends: Sequence[str], models: Mapping[str, str] | None = None
) -> list[RouteSpec]:
    """Every translate route, plus the names a models-list scenario expects to see listed (on the first backend)."""
    return route_table(scenarios, backends, modes=("translate",), models=models)


def single_upstream(
    gateway: str, table: Mapping[str, GatewayName], replay_url: str, backends: Sequence[str]
) -> tuple[GatewayName, str]:
    """The one upstream a gateway without a model table takes (it sends the client's model on, and the replay
    server finds the scenario by that route name): its name there, and its base URL, the replay server's root for
    the one backend of `backends` it names with the path it appends left off. A ValueError when it names none or
    several."""
    chosen = [b for b in backends if naming_in(table, b) is not None]
    if len(chosen) != 1:
        raise ValueError(f"{gateway} takes one Chat Completions upstream, not {', '.join(chosen) or 'none'}")
    (backend,) = chosen
    name = named(gateway, table, backend)
    return name, f"{replay_url}/{backend}" + name.base_path(request_path(backend))


def request_path(backend: str) -> str:
    """The path the backend's codec posts a generation request to (the gateway's base URL + this)."""
    sample = ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])])
    return registry.get(backend).encode_request(sample).path


def upstream_url(name: GatewayName, replay_url: str, route: RouteSpec) -> str:
    """The URL a gateway is configured with for a route: its upstream base plus what the gateway (naming the
    route's backend `name`) does not append itself."""
    return route.upstream_base(replay_url) + name.base_path(request_path(route.backend))


def q(text: str) -> str:
    """`text` quoted: a JSON string is a valid TOML basic string and a valid YAML scalar."""
    return json.dumps(text)


def notes(table: Mapping[str, GatewayName], backends: Sequence[str]) -> list[str]:
    """The notes of the names of `backends`, as config comments, each once."""
    names = (naming_in(table, b) for b in backends)
    return [f"# {note}" for note in dict.fromkeys(n.note for n in names if n is not None and n.note)]


def served(table: Mapping[str, GatewayName], rs: Sequence[RouteSpec]) -> list[RouteSpec]:
    """The generation routes into backends the gateway can name (listed-only names are the proxy's own)."""
    return [r for r in rs if r.scenario is not None and naming_in(table, r.backend) is not None]


class GatewayInstallError(LookupError):
    """The gateway's executable or install is missing; says how to install it."""


def env_lines(text: str) -> dict[str, str]:
    """The variables of a `.env` text: `NAME=VALUE` lines, blank lines and `#` comments skipped; anything else is a
    ValueError naming the line."""
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip().isidentifier():
            raise ValueError(f"line {number} of a .env config is not NAME=VALUE: {line!r}")
        out[name.strip()] = value.strip()
    return out


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
    names: Mapping[str, GatewayName] = field(default_factory=dict)
    """How it names each protocol it serves or reaches (its module's `NAMES`)."""
    names_from: str = ""
    """The gateway whose config format it uses (empty: its own name): a second route of one gateway (LiteLLM's
    `/v1/responses`) is configured like the first."""
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
    config_is_env: bool = False
    """Its config is `NAME=VALUE` lines given to it as environment variables (a gateway that reads no file)."""
    unversioned: tuple[str, ...] = ()
    """Frontends it serves without the `/v1` their SDK puts first (`--sut-unversioned`): a gateway documented with
    `OPENAI_BASE_URL=http://host:port`."""

    @property
    def naming(self) -> str:
        """Its config format."""
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
            and (name_there := naming_in(self.names, name)) is not None
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
            if registry.facts(name).sdk is not None and naming_in(self.names, name) is not None
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
        if self.config_is_env:
            extra.update(env_lines((run_dir / self.config_file).read_text(encoding="utf-8")))
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
