"""The known-failures file (`conformance-known.toml`): proxy bugs a team has accepted for now, each with a reason.

```toml
[[case]]
id = "tool-call-parallel[anthropic->gemini,stream]"
verdict = "proxy_bug_response"
reason = "gateway drops the second call; tracked in #123"
```
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.trace.model import CaseResult, Verdict


class KnownFileError(ValueError):
    """The known-failures file is malformed; names the file and the entry."""


@dataclass(frozen=True)
class Known:
    """One accepted failure."""

    id: str
    """Case id."""
    verdict: Verdict
    """The verdict it is known to have."""
    reason: str
    """Why it is accepted."""


def load_known(path: Path) -> dict[str, Known]:
    """The entries of the file by case id; an absent file means none."""
    if not path.exists():
        return {}
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise KnownFileError(f"{path}: {exc}") from exc
    entries = doc.get("case", [])
    if not isinstance(entries, list):
        raise KnownFileError(f"{path}: 'case' must be an array of tables ([[case]])")
    out: dict[str, Known] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("id", "verdict", "reason")):
            raise KnownFileError(f"{path}: case[{i}]: needs string keys id, verdict, reason")
        unknown = set(entry) - {"id", "verdict", "reason"}
        if unknown:
            raise KnownFileError(f"{path}: case[{i}]: unknown keys {sorted(unknown)}")
        try:
            verdict = Verdict(entry["verdict"])
        except ValueError:
            allowed = ", ".join(v.value for v in Verdict)
            raise KnownFileError(f"{path}: case[{i}]: verdict {entry['verdict']!r} is not one of {allowed}") from None
        if verdict.is_harness_error:
            raise KnownFileError(
                f"{path}: case[{i}]: a harness_error cannot be a known failure (nothing was judged): fix the setup"
            )
        out[entry["id"]] = Known(entry["id"], verdict, entry["reason"])
    return out


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def write_known(path: Path, results: Iterable[CaseResult], previous: dict[str, Known]) -> int:
    """Rewrite the file with every current proxy bug (keeping earlier reasons); returns the number of entries."""
    lines = ["# Proxy bugs accepted for now. `conformance run --update-known` rewrites this file.", ""]
    count = 0
    for result in results:
        if not result.verdict.is_proxy_bug:
            continue
        old = previous.get(result.case_id)
        reason = old.reason if old and old.verdict == result.verdict else result.reason
        lines += [
            "[[case]]",
            f"id = {_quote(result.case_id)}",
            f"verdict = {_quote(result.verdict)}",
            f"reason = {_quote(reason)}",
            "",
        ]
        count += 1
    path.write_text("\n".join(lines), encoding="utf-8")
    return count
