"""`conformance record`: (re-)record cassettes from the reference backends (no keys) or the real providers."""

from __future__ import annotations

import argparse

from harness.cli import say_error
from harness.cli._sources import add_layer_options, cassette_layers, layer_problem, scenario_layers


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "record",
        help="record cassettes from reference backends or real providers",
        description=(
            "Record cassettes/<backend>/<scenario>.<stream|nonstream>.yaml. --source reference (default) answers "
            "with the reference backends in-process, no keys needed. --source real calls the provider; its key "
            "comes from the provider's usual environment variable (`conformance list providers` names them, and a "
            "local server's host variable). Secrets are scrubbed before anything is written."
        ),
    )
    p.add_argument("--backend", type=_names, action="extend", required=True, help="backends (comma list, or 'all')")
    p.add_argument("--scenario", type=_names, action="extend", help="only these scenario ids (default: all)")
    p.add_argument("--source", choices=("reference", "real"), default="reference", help="where answers come from")
    p.add_argument(
        "--mode",
        choices=("once", "new_episodes", "all", "rewrite"),
        default="rewrite",
        help="record mode (pytest-recording names; default rewrite: replace what exists)",
    )
    p.add_argument("--streaming", choices=("both", "stream", "nonstream"), default="both")
    p.add_argument("--model", help="real model to record (default: the provider's, see `conformance list providers`)")
    p.add_argument("--base-url", help="real provider base URL override")
    add_layer_options(p)  # cassettes are written to the first --cassettes folder (in a checkout: cassettes/)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Record; exit 2 on a usage problem (unknown backend or scenario, missing key), 1 on a failed request."""
    from harness.protocols import registry
    from harness.protocols.registry import UnknownProtocolError
    from harness.record import RecordMode, Source, record_one, reference_source
    from harness.record.real import MissingKeyError, placeholder_values, resolve_endpoint
    from harness.scenarios.loader import ScenarioError, load_scenarios, select

    try:
        problem = layer_problem(args, writes="cassettes")
        if problem:
            raise ValueError(problem)
        layers = scenario_layers(args, "record")
        scenarios = load_scenarios(layers)
        root = cassette_layers(args).write_folder()
        backends = registry.names() if args.backend == ["all"] else args.backend
        for name in backends:
            registry.get(name)
        chosen = select(scenarios, args.scenario, folder=layers)
        sources: dict[str, Source] = {}
        for name in backends:
            if args.source == "reference":
                sources[name] = reference_source(scenarios)
            else:
                url, key, model = resolve_endpoint(name, base_url=args.base_url)
                sources[name] = Source(
                    kind="real",
                    base_url=url,
                    api_key=key,
                    model=args.model or model,
                    placeholders=placeholder_values(name),
                )
    except (ScenarioError, UnknownProtocolError, MissingKeyError, ValueError) as exc:
        say_error("record", f"{exc}; nothing recorded")
        return 2
    modes = {"both": (True, False), "stream": (True,), "nonstream": (False,)}[args.streaming]
    count = 0
    for name in backends:
        for scenario in chosen:
            if scenario.kind == "models_list":
                continue
            for stream in modes:
                if ("stream" if stream else "nonstream") not in scenario.streaming:
                    continue
                if not stream and registry.facts(name).stream_only:
                    continue  # its only answer is a stream: a non-streamed cassette would hold one too
                path = record_one(
                    name,
                    scenario,
                    stream,
                    scenarios=scenarios,
                    root=root,
                    source=sources[name],
                    mode=RecordMode(args.mode),
                )
                count += 1
                print(f"recorded {path}")  # noqa: T201
    print(f"{count} cassette(s) from {args.source} source")  # noqa: T201
    return 0
