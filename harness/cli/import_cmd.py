"""`conformance import`: a recorded exchange becomes a conformance case (scenario, the real answer's cassette, and
every other backend's reference cassette), so a gateway is judged on traffic its users recorded."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cli import EXIT_OK, EXIT_USAGE, say_error
from harness.cli._sources import add_layer_options, cassette_layers, scenario_layers

if TYPE_CHECKING:
    from harness.importer import Exchange, Imported


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "import",
        help="turn a recorded exchange into a conformance case (scenario + real cassette)",
        description=(
            "Import a recorded exchange as a case. FILE is a capture (vcrpy, go-vcr v2, httprr, or the harness's own "
            "cassette; every interaction unless --interaction names one), or a raw response body with --request "
            "(its request body) and --url. Writes scenarios/<id>.yaml (the request as IR, the decoded answer as the "
            "scripted reply, expectations from what the backend's own SDK saw of the recorded answer), "
            "cassettes/<protocol>/<id>.<mode>.yaml (the recorded answer verbatim, metadata.source: real, with its "
            "origin) and a reference cassette for each frontend's own backend (their baselines). Secrets are "
            "scrubbed. Exit 0: imported; 2: nothing imported from the failing exchange on (a usage error, an "
            "unreadable capture, an answer or request the decoder cannot read, a stream that stops before its end "
            "without --truncated)."
        ),
    )
    p.add_argument("file", type=Path, help="capture file, or raw response body (with --request)")
    p.add_argument("--interaction", type=int, help="index of the exchange in the capture (default: every one)")
    p.add_argument("--id", help="scenario id (default: the file name, plus -N for each of several interactions)")
    p.add_argument("--protocol", help="protocol or profile that answered (default: found from the recorded URL)")
    p.add_argument("--request", type=Path, help="raw request body file, when FILE is a raw response body")
    p.add_argument("--url", help="the raw request's URL (absolute, or path and query); where the model may sit")
    p.add_argument("--status", type=int, default=200, help="the raw response's HTTP status (default 200)")
    add_layer_options(p)  # written to the first folder given (in a checkout, by default: scenarios/, cassettes/)
    p.add_argument(
        "--backends",
        type=_names,
        default=["frontends"],
        help=(
            "backends that answer the scenario with their reference: comma list, 'frontends' (default: the backends "
            "every frontend's baseline needs), 'all' or 'none'"
        ),
    )
    p.add_argument("--force", action="store_true", help="replace a scenario of the same id")
    p.add_argument(
        "--truncated",
        action="store_true",
        help="the provider really cut the recorded stream: make a case of a cut stream (default: refuse it)",
    )
    p.set_defaults(func=run)


def _backends(names: list[str]) -> list[str] | None:
    from harness.protocols import registry
    from harness.runner.plan import default_frontends

    if names == ["frontends"]:
        return default_frontends()
    if names == ["all"]:
        return None
    if names == ["none"]:
        return []
    for name in names:
        registry.get(name)
    return names


def _exchanges(args: argparse.Namespace) -> list[tuple[str, Exchange]]:
    """(scenario id, exchange) of each exchange to import."""
    from harness.capture import is_capture
    from harness.importer import ImportUsageError, from_capture, from_raw, interaction_count, slug

    try:
        raw = args.file.read_bytes()
    except OSError as exc:
        raise ImportUsageError(f"{args.file}: cannot read: {exc.strerror}") from exc
    stem = slug(args.file.name.split(".")[0])
    if not is_capture(raw):
        if args.request is None:
            raise ImportUsageError(
                f"{args.file} is no capture (vcrpy, go-vcr v2, httprr, a harness cassette); as a raw response body "
                "it needs --request (and --url)"
            )
        if args.protocol is None:
            raise ImportUsageError(f"{args.file}: a raw body needs --protocol")
        exchange = from_raw(args.file, args.request, protocol=args.protocol, url=args.url, status=args.status)
        return [(args.id or stem, exchange)]
    if args.request is not None or args.url is not None:
        raise ImportUsageError(f"{args.file} is a capture: it records each request; --request and --url are for raw")
    count = interaction_count(args.file)
    chosen = [args.interaction] if args.interaction is not None else list(range(count))
    if args.id is not None and len(chosen) > 1:
        raise ImportUsageError(f"{args.file} has {count} interactions: --id names one, so pass --interaction too")
    if not chosen:
        raise ImportUsageError(f"{args.file}: the capture has no interaction")
    out: list[tuple[str, Exchange]] = []
    for index in chosen:
        name = args.id or (f"{stem}-{index}" if count > 1 else stem)
        out.append((name, from_capture(args.file, index, args.protocol)))
    return out


def run(args: argparse.Namespace) -> int:
    """Import; exit 2 when an exchange cannot be imported (the ones before it stay imported)."""
    from harness.capture import CaptureError
    from harness.importer import ImportFailure, import_exchange
    from harness.protocols.registry import UnknownProtocolError

    try:
        backends = _backends(args.backends)
        scenarios, cassettes = scenario_layers(args, "import").write_folder(), cassette_layers(args).write_folder()
        exchanges = _exchanges(args)
        for scenario_id, exchange in exchanges:
            done = import_exchange(
                exchange,
                scenario_id,
                scenarios=scenarios,
                cassettes=cassettes,
                backends=backends,
                force=args.force,
                truncated=args.truncated,
            )
            _say(exchange, done)
    except (ImportFailure, CaptureError, UnknownProtocolError, ValueError) as exc:
        say_error("import", exc)
        return EXIT_USAGE
    except RecursionError:
        # JSON nested thousands deep (tool arguments, say) exhausts a parser's recursion somewhere on the way:
        # the SDK's, a decoder's, the scenario writer's. Nothing of this exchange is kept.
        say_error("import", f"{args.file}: the exchange nests too deeply to import (JSON thousands of levels deep)")
        return EXIT_USAGE
    return EXIT_OK


def _say(exchange: Exchange, done: Imported) -> None:
    head = f"imported {exchange.origin.label} as {done.scenario.id} ({done.backend}; expectations: {done.view})"
    print(head)  # noqa: T201
    print(f"  scenario   {done.scenario_path}")  # noqa: T201
    print(f"  real       {done.cassette}")  # noqa: T201
    print(f"  reference  {len(done.references.written)} backend(s)")  # noqa: T201
    for backend, why in sorted(done.references.skipped.items()):
        print(f"  no cassette for {backend}: {why}")  # noqa: T201
    for note in done.notes:
        print(f"  note: {note}")  # noqa: T201
