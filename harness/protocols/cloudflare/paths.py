"""Where a Workers AI request goes: `/client/v4/accounts/{account_id}/ai/run/{model}`, the model in the path.

Models are named `@cf/{vendor}/{model}` (or `@hf/...`), so the model is everything after `/ai/run/`. The
account id is part of the URL, not of the request: decoding keeps a non-default one in
`provider_fields["cloudflare"]["account_id"]` so the same request can be sent on, and encoding without one uses
`ACCOUNT_PLACEHOLDER` (what recording against the real API must replace with `ACCOUNT_ENV`'s value).
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from harness.protocols.jsonread import Reader

PROTOCOL = "cloudflare"
"""Registry name, also the key of `Request.provider_fields` this codec owns."""

READ = Reader(PROTOCOL)
"""Typed reads of Workers AI JSON (and this protocol's `DecodeError`)."""

API_PREFIX = "/client/v4"
"""Path prefix of Cloudflare's REST API (`https://api.cloudflare.com/client/v4`)."""

ACCOUNT_PLACEHOLDER = "0" * 32
"""Account id written when a request names none (Cloudflare account ids are 32 hex digits)."""

ACCOUNT_ENV = "CLOUDFLARE_ACCOUNT_ID"
"""Environment variable holding the real account id (as langchain-cloudflare and workers-ai-provider read it)."""

KEY_ENV = ("CLOUDFLARE_API_TOKEN", "CLOUDFLARE_API_KEY")
"""Environment variables holding the API token, in order of preference."""

ROUTE = "/accounts/{account_id}/ai/run/{model}"
"""The native route under `API_PREFIX`, with its two path parameters."""

_RUN = re.compile(r"/accounts/(?P<account>[^/]+)/ai/run/(?P<model>.+)$")


def parse(path: str) -> tuple[str, str]:
    """(account id, model) of a native request path; any prefix before `/accounts/` is allowed (proxy routes)."""
    match = _RUN.search(path)
    if match is None:
        raise READ.error(f"path {path!r} is not .../accounts/ACCOUNT/ai/run/MODEL")
    return unquote(match["account"]), unquote(match["model"])


def build(model: str, account: str | None = None) -> str:
    """The native path for `model` (the `@` and `/` of the model name stay as they are)."""
    return f"{API_PREFIX}/accounts/{quote(account or ACCOUNT_PLACEHOLDER, safe='')}/ai/run/{quote(model, safe='@/')}"
