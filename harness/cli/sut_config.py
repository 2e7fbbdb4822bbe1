"""`conformance sut-config`: the config a gateway under test needs so that `conformance run --sut URL` can gate it:
one route per (scenario, backend), each pointed at the replay server, in the gateway's own format."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from harness.cli._sources import add_layer_options, cassette_folder, layer_problem, scenario_layers


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


class _Formats:
    """The `--format` values, read from the gateway modules (`gateways.configs.FORMATS`, and `json`) only when
    argparse asks: building the parser, which every command does, must not import the gateways (0.25 s)."""

    def _all(self) -> tuple[str, ...]:
        from harness.gateways.configs import FORMATS

        return (*FORMATS, "json")

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __contains__(self, value: object) -> bool:
        return value in self._all()


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "sut-config",
        help="print a gateway config routing every translate case to the replay server",
        description=(
            "Print the config of a gateway under test: each model name the SDKs send "
            "(<scenario>--<backend>--translate) goes to upstream <backend> at the replay server, the scenario in the "
            "URL (REPLAY_URL/<backend>/_s/<scenario>), with a realistic model of the backend, keyed with "
            "$CONFORMANCE_PLANTED_KEY. Formats: conformance (TOML for `conformance serve`), litellm (proxy YAML; "
            "master key from $CONFORMANCE_CLIENT_KEY), louter (backends YAML), portkey (a headers file for "
            "`conformance run --sut-headers`), ccr (its config.json; APIKEY from $CONFORMANCE_CLIENT_KEY), "
            "codex-rosetta (its .env; it takes one upstream: name its Chat Completions backend with --backend), "
            "mlflow (MLflow AI Gateway's endpoints YAML), nullplatform (LLM Gateway's YAML: a project per route, "
            "the --sut URL to gate it with in its first lines), each other gated gateway's own format (see --format), "
            "json "
            "(each backend's single upstream and request paths, each route's upstream URL and model: for a gateway "
            "set up by hand or by script, one that routes by path or header, or one gateway per upstream)."
        ),
    )
    p.add_argument("--replay-url", default="http://127.0.0.1:8790", help="replay server root (default: %(default)s)")
    p.add_argument(
        "--format",
        choices=_Formats(),
        default="conformance",
        metavar="FORMAT",  # not the choices: argparse would read them while building the parser
        help="one of %(choices)s (default: %(default)s)",
    )
    p.add_argument(
        "--upstream-model",
        metavar="BACKEND=MODEL",
        action="append",
        default=[],
        help="the model sent upstream for BACKEND (repeatable; default: a realistic one per backend); give "
        "`conformance run` the same",
    )
    add_layer_options(p)  # the backends recorded in the cassette folders are the default --backend
    p.add_argument("--backend", type=_names, action="extend", help="backends (comma list; default: all recorded)")
    p.add_argument("--scenario", type=_names, action="extend", help="only these scenario ids (comma list)")
    p.add_argument(
        "--hooks", help="conformance format: a fault name to switch on, or identity (default); see `selftest --list`"
    )
    p.add_argument("-o", "--output", type=Path, help="write here instead of standard output")
    p.add_argument(
        "--scenario-table", action="store_true", help="print the scenario/capability table (Markdown) instead"
    )
    p.add_argument(
        "--endpoint-table",
        action="store_true",
        help="print each backend's request paths and upstream model (Markdown) instead",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print (or write) the config."""
    from harness.gateways import render, scenario_table
    from harness.gateways.configs import GATEWAYS
    from harness.gateways.names import naming
    from harness.protocols.registry import UnknownProtocolError
    from harness.rig.routes import parse_model_overrides
    from harness.runner import names
    from harness.runner.plan import default_backends
    from harness.scenarios.loader import ScenarioError, load_scenarios, select

    try:
        hooks = _hooks(args.hooks, args.format)
        problem = layer_problem(args)
        if problem:
            raise ValueError(problem)
        layers = scenario_layers(args, "sut-config")
        scenarios = select(load_scenarios(layers), args.scenario, folder=layers)
        backends = list(args.backend or default_backends(cassette_folder(args, "sut-config", quiet=True)))
        names.check((), backends, ())
        if not args.backend and args.format in GATEWAYS:
            # By default, the recorded backends the gateway serves (its name for each is a protocol fact).
            left_out = [b for b in backends if naming(args.format, b) is None]
            backends = [b for b in backends if b not in left_out]
            if left_out:
                note = f"conformance sut-config: {args.format} serves no {', '.join(left_out)}: left out"
                print(note, file=sys.stderr)  # noqa: T201
        if args.scenario_table:
            text = scenario_table(scenarios)
        elif args.endpoint_table:
            from harness.gateways.endpoints import endpoint_table

            text = endpoint_table(backends)
        elif args.format == "json":
            from harness.gateways.endpoints import endpoints_json

            text = endpoints_json(args.replay_url, scenarios, backends, parse_model_overrides(args.upstream_model))
        else:
            models = parse_model_overrides(args.upstream_model)
            text = render(args.format, args.replay_url, scenarios, backends, hooks=hooks, models=models)
    except (ScenarioError, UnknownProtocolError, ValueError) as exc:
        for line in str(exc).splitlines():
            print(f"conformance sut-config: {line}", file=sys.stderr)  # noqa: T201
        return 2
    if args.output is not None:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def _hooks(name: str | None, fmt: str) -> str:
    """The hooks a conformance-format config switches on: identity or a catalogued fault (what `conformance serve`
    accepts); other gateways take none."""
    from harness.faults import FAULTS
    from harness.proxy.config import suggest

    if name is None:
        return "identity"
    if fmt != "conformance":
        raise ValueError(f"--hooks {name!r}: only the conformance format switches hooks on, not {fmt}")
    allowed = ["identity", *(fault.name for fault in FAULTS)]
    if name not in allowed:
        raise ValueError(
            f"--hooks {name!r}: no fault of that name{suggest(name, allowed)}; allowed: {', '.join(allowed)}"
        )
    return name
