"""`conformance decode`: print the IR of a captured body, to triage captures by hand."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from harness import ir
from harness.capture import CaptureError, Interaction, is_capture, load_interactions
from harness.protocols import DecodeError, decode_events, facts, registry
from harness.stream import accumulate
from harness.wire.http import HttpRequest

KINDS = ("request", "response", "stream")
EXIT_OK, EXIT_UNDECODABLE, EXIT_USAGE = 0, 1, 2
UNKNOWN_MODEL = "UNKNOWN"
"""The model of a raw request whose protocol keeps the model in the URL, decoded without `--url`."""


class UsageError(ValueError):
    """The arguments do not fit the file (a cassette without --interaction, --url on a response, ...)."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "decode",
        help="decode a captured request, response or stream body to IR JSON",
        description=(
            "Decode a captured body with a protocol's decoder and print the IR as JSON. FILE is a raw body, or a "
            "cassette (the harness's own, vcrpy, go-vcr v2, httprr) with --interaction N; a cassette without "
            "--interaction lists its interactions. For a cassette the recorded URL and status count: an error "
            "status decodes as an error. A raw request of a protocol that keeps the model in the URL takes --url; "
            "without it the model is printed as UNKNOWN and listed under "
            "'unknown'. Output keys: 'request'; or 'response'; or 'error'; a stream prints 'events' and the "
            "accumulated 'response' (or 'error'). Exit 0: decoded; 1: the body does not decode; 2: usage error."
        ),
    )
    p.add_argument("--protocol", required=True, help="protocol or profile name (see `conformance list providers`)")
    p.add_argument("--kind", required=True, choices=KINDS, help="what the body is")
    p.add_argument("--interaction", type=int, default=None, help="interaction index inside a cassette")
    p.add_argument("--url", help="a raw request's URL (absolute, or path and query), where the model may sit")
    p.add_argument("file", type=Path, help="raw body file or cassette")
    p.set_defaults(func=run)


def _say(message: str) -> None:
    print(f"conformance decode: {message}", file=sys.stderr)  # noqa: T201


def run(args: argparse.Namespace) -> int:
    """Decode and print; exit 1 with a message on undecodable input, 2 on a usage error."""
    try:
        codec = registry.get(args.protocol)
    except registry.UnknownProtocolError as exc:
        _say(f"--protocol: {exc}")
        return EXIT_USAGE
    try:
        raw = args.file.read_bytes()
    except OSError as exc:
        _say(f"{args.file}: cannot read: {exc.strerror}")
        return EXIT_USAGE
    try:
        out = _from_capture(codec, args) if is_capture(raw) else _from_raw(codec, args, raw)
    except UsageError as exc:
        _say(str(exc))
        return EXIT_USAGE
    except (CaptureError, DecodeError) as exc:
        _say(str(exc))
        return EXIT_UNDECODABLE
    except RecursionError:  # JSON nested thousands deep exhausts a parser's recursion
        _say(f"{args.file}: nested too deeply to decode (JSON thousands of levels deep)")
        return EXIT_UNDECODABLE
    if out is None:
        return EXIT_USAGE
    sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK


def _from_capture(codec: registry.Codec, args: argparse.Namespace) -> dict[str, Any] | None:
    items = load_interactions(args.file)
    if args.url is not None:
        raise UsageError(f"{args.file}: --url is for a raw body; a cassette records each request's URL")
    if args.interaction is None:
        sys.stdout.write(listing(args.file, items))
        last = f"0-{len(items) - 1}" if items else "none: the cassette is empty"
        _say(f"{args.file} is a cassette: pass --interaction INDEX ({last}) to decode one")
        return None
    if not 0 <= args.interaction < len(items):
        raise UsageError(f"{args.file}: --interaction {args.interaction}: the cassette has {len(items)} (0-based)")
    item = items[args.interaction]
    for note in item.notes:
        _say(f"note: {args.file}: interaction {args.interaction}: {note}")
    if args.kind == "request":
        return {"request": ir.to_json(codec.decode_request(item.request))}
    return _response(codec, args.kind, item.response.status, dict(item.response.headers), item.response_chunks())


def listing(path: Path, items: list[Interaction]) -> str:
    """The interactions of a cassette, one line each: index, method, status, body sizes, URL."""
    lines = [
        f"{path}: {len(items)} interaction(s)",
        f"{'#':>3}  {'method':6}  status  {'request':>9}  {'response':>9}  url",
    ]
    for i, item in enumerate(items):
        sizes = f"{len(item.request.body):>7} B  {len(item.response.body):>7} B"
        lines.append(f"{i:>3}  {item.request.method:6}  {item.response.status:>6}  {sizes}  {item.url}")
    return "\n".join(lines) + "\n"


def _from_raw(codec: registry.Codec, args: argparse.Namespace, raw: bytes) -> dict[str, Any]:
    if args.interaction is not None:
        raise UsageError(
            f"{args.file}: --interaction {args.interaction}: the file is a raw body, not a cassette "
            "(vcrpy, go-vcr v2, httprr or the harness's own)"
        )
    if args.kind != "request":
        if args.url is not None:
            raise UsageError("--url: only a request is decoded with its URL (--kind request)")
        return _response(codec, args.kind, None, {}, [raw])
    if args.url is not None:
        request = HttpRequest.from_url("POST", args.url, {}, raw)
        return {"request": ir.to_json(codec.decode_request(request))}
    path, query, unknown = probe(codec)
    decoded = ir.to_json(codec.decode_request(HttpRequest("POST", path, query=query, body=raw)))
    if not unknown:
        return {"request": decoded}
    what, given = (
        ("model", f"model {UNKNOWN_MODEL}")
        if unknown == ["model"]
        else ("model and whether it streams", f"model {UNKNOWN_MODEL}, not streamed")
    )
    _say(f"{codec.name} keeps the {what} in the URL: decoded with {given} (pass --url to give the URL)")
    return {"request": decoded, "unknown": unknown}


def model_in_url(codec: registry.Codec) -> bool:
    """Whether the protocol's requests name the model in the URL: its frontend facts say so; a protocol without
    a frontend declaration is asked by encoding a request and seeing where the model lands."""
    frontend = registry.facts(codec.name).frontend
    if frontend is not None:
        return isinstance(frontend.model, facts.ModelInPath)
    request = _encoded(codec, stream=False)
    return UNKNOWN_MODEL in request.path and UNKNOWN_MODEL.encode() not in request.body


def probe(codec: registry.Codec) -> tuple[str, dict[str, str], list[str]]:
    """The path and query a raw request of this protocol is decoded at when no URL is given, and what the URL
    would have said that the body does not (`model`, `stream`)."""
    plain, streamed = _encoded(codec, stream=False), _encoded(codec, stream=True)
    if not model_in_url(codec):
        return plain.path, plain.query, []
    unknown = ["model"]
    if (plain.path, plain.query) != (streamed.path, streamed.query) and plain.body == streamed.body:
        unknown.append("stream")
    return plain.path, plain.query, unknown


def _encoded(codec: registry.Codec, *, stream: bool) -> HttpRequest:
    message = ir.Message(role="user", content=[ir.TextPart(text="probe")])
    return codec.encode_request(ir.Request(model=UNKNOWN_MODEL, messages=[message], stream=stream))


def _response(
    codec: registry.Codec, kind: str, status: int | None, headers: dict[str, str], chunks: list[bytes]
) -> dict[str, Any]:
    body = b"".join(chunks)
    if status is not None and status >= 400:
        return {"error": ir.to_json(codec.decode_error(status, headers, body))}
    if kind == "response":
        return {"response": ir.to_json(codec.decode_response(body))}
    events = decode_events(codec, chunks)
    result = accumulate(events)
    out: dict[str, Any] = {"events": ir.events_to_json(events)}
    if result.error is not None:
        out["error"] = ir.to_json(result.error)
    else:
        out["response"] = ir.to_json(result.response)
    return out
