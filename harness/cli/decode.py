"""`conformance decode`: print the IR of a captured body, to triage captures by hand."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from harness import ir
from harness.capture import CaptureError, load_interactions
from harness.protocols import DecodeError, decode_events, registry
from harness.stream import accumulate

KINDS = ("request", "response", "stream")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommand."""
    p = sub.add_parser(
        "decode",
        help="decode a captured request, response or stream body to IR JSON",
        description=(
            "Decode a captured body with a protocol's decoder and print the IR as JSON. FILE is a raw body "
            "or a cassette (vcrpy, go-vcr v2, httprr) with --interaction N. For a cassette the recorded "
            "status decides whether a response is an error. Output keys: 'request'; or 'response'; or "
            "'error'; a stream prints 'events' and the accumulated 'response' (or 'error')."
        ),
    )
    p.add_argument("--protocol", required=True, help="protocol or profile name (see `conformance list`)")
    p.add_argument("--kind", required=True, choices=KINDS, help="what the body is")
    p.add_argument("--interaction", type=int, default=None, help="interaction index inside a cassette")
    p.add_argument("file", type=Path, help="raw body file or cassette")
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    print(f"conformance decode: {message}", file=sys.stderr)  # noqa: T201
    return 1


def run(args: argparse.Namespace) -> int:
    """Decode and print; exit 1 with a message on undecodable input, 2 on an unknown protocol."""
    try:
        codec = registry.get(args.protocol)
    except registry.UnknownProtocolError as exc:
        print(f"conformance decode: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    try:
        out = _decode(codec, args.kind, args.file, args.interaction)
    except (CaptureError, DecodeError) as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"{args.file}: {exc.strerror}")
    sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    return 0


def _decode(codec: registry.Codec, kind: str, path: Path, interaction: int | None) -> dict[str, Any]:
    status: int | None = None
    headers: dict[str, str] = {}
    if interaction is None:
        request_body = response_body = path.read_bytes()
        http_request = None
    else:
        items = load_interactions(path)
        if not 0 <= interaction < len(items):
            raise CaptureError(f"{path}: no interaction {interaction} (it has {len(items)})")
        item = items[interaction]
        http_request = item.request
        request_body, response_body = item.request.body, item.response.body
        status, headers = item.response.status, dict(item.response.headers)
    if kind == "request":
        from harness.wire.http import HttpRequest

        req = http_request or HttpRequest(method="POST", path="", body=request_body)
        return {"request": ir.to_json(codec.decode_request(req))}
    if status is not None and status >= 400:
        return {"error": ir.to_json(codec.decode_error(status, headers, response_body))}
    if kind == "response":
        return {"response": ir.to_json(codec.decode_response(response_body))}
    events = decode_events(codec, [response_body])
    result = accumulate(events)
    out: dict[str, Any] = {"events": ir.events_to_json(events)}
    if result.error is not None:
        out["error"] = ir.to_json(result.error)
    else:
        out["response"] = ir.to_json(result.response)
    return out
