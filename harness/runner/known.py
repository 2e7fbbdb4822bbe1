"""The known-failures file (`conformance-known.toml`): proxy bugs a team has accepted for now, each with a reason
and the signature of the bug that was accepted.

```toml
[[case]]
id = "tool-call-parallel[anthropic->gemini,stream]"
verdict = "proxy_bug_response"
reason = "gateway drops the second call; tracked in #123"
signature = ["check:tool_calls", "response:response.content[*]:removed"]
```

A known case stays known only while its verdict is the same and its signature (the failing checks and every
divergence's path, indices as `[*]`, and kind) holds nothing the entry does not: a bug that grows, or a second bug
on the same case, is new. An entry without a signature (files written before signatures) holds the verdict only,
as before; `--update-known` adds the signature.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
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
    signature: tuple[str, ...] | None = None
    """The accepted bug's signature (`signature`); None for an entry written before signatures."""


KEYS = ("id", "verdict", "reason")
OPTIONAL_KEYS = ("signature",)
INDEX = re.compile(r"\[\d+\]")


def _path(path: str) -> str:
    return INDEX.sub("[*]", path)


def signature(result: CaseResult) -> tuple[str, ...]:
    """What a case's bug is made of: the translated run's failed checks and grammar violations, and every request
    and response divergence as its path (list indices as `[*]`) and kind of change. Sorted, without repeats."""
    parts: set[str] = set()
    translated = result.runs.get("translated")
    if translated is not None:
        parts |= {f"check:{c.name}" for c in translated.checks if not c.passed}
        parts |= {f"grammar:{g.split(' ', 1)[0]}" for g in translated.grammar}
    parts |= {f"request:{_path(d.path)}:{d.change}" for d in result.request_divergences}
    parts |= {f"response:{_path(d.path)}:{d.change}" for d in result.response_divergences}
    return tuple(sorted(parts))


def matches(entry: Known, result: CaseResult) -> bool:
    """Whether `entry` still accepts this result: the same proxy-bug verdict, and nothing in its signature that the
    entry's does not hold (an entry without a signature holds the verdict only)."""
    if not result.verdict.is_proxy_bug or entry.verdict != result.verdict:
        return False
    return entry.signature is None or set(signature(result)) <= set(entry.signature)


def grown(entry: Known, result: CaseResult) -> list[str]:
    """What the result's signature holds beyond the entry's: why a known case is new again."""
    if entry.signature is None:
        return []
    return [part for part in signature(result) if part not in entry.signature]


CASE_ID = re.compile(r"^[a-z0-9][a-z0-9-]*\[[A-Za-z0-9_.-]+->[A-Za-z0-9_.-]+,(?:stream|nonstream)(?:,ws)?\]$")
"""A case id as `Case.case_id` writes it: `<scenario>[<frontend>-><backend>,<stream|nonstream>]`."""


def accepted_verdicts() -> list[Verdict]:
    """The verdicts an entry may name: only a proxy bug fails the gate, so only a proxy bug can be accepted."""
    return [v for v in Verdict if v.is_proxy_bug]


def load_known(path: Path, *, required: bool = False) -> dict[str, Known]:
    """The entries of the file by case id; an absent file means none unless `required` (the user named it)."""
    if not path.exists():
        if required:
            raise KnownFileError(f"{path}: no such known-failures file")
        return {}
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise KnownFileError(f"{path}: not a readable TOML file: {exc}") from exc
    unknown = sorted(set(doc) - {"case"})
    if unknown:
        raise KnownFileError(f"{path}: {unknown[0]}: unknown key; the file holds only [[case]] tables")
    entries = doc.get("case", [])
    if not isinstance(entries, list):
        raise KnownFileError(f"{path}: case: must be an array of tables ([[case]])")
    out: dict[str, Known] = {}
    for i, entry in enumerate(entries):
        known = _entry(path, i, entry)
        if known.id in out:
            raise KnownFileError(f"{path}: case[{i}].id: {known.id!r} is listed twice")
        out[known.id] = known
    return out


def _entry(path: Path, i: int, entry: object) -> Known:
    where = f"{path}: case[{i}]"
    if not isinstance(entry, dict):
        raise KnownFileError(f"{where}: must be a table with keys {', '.join(KEYS)}")
    extra = sorted(set(entry) - set(KEYS) - set(OPTIONAL_KEYS))
    if extra:
        raise KnownFileError(f"{where}.{extra[0]}: unknown key; allowed: {', '.join((*KEYS, *OPTIONAL_KEYS))}")
    for key in KEYS:
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise KnownFileError(f"{where}.{key}: missing or empty; each entry needs a string {key}")
    if not CASE_ID.match(entry["id"]):
        raise KnownFileError(
            f"{where}.id: {entry['id']!r} is not a case id; allowed: <scenario>[<frontend>-><backend>,stream|nonstream]"
        )
    allowed = accepted_verdicts()
    if entry["verdict"] not in allowed:
        names = " or ".join(v.value for v in allowed)
        raise KnownFileError(f"{where}.verdict: {entry['verdict']!r} is not allowed; allowed: {names}")
    sig = entry.get("signature")
    if sig is not None and (not isinstance(sig, list) or not all(isinstance(p, str) and p for p in sig)):
        raise KnownFileError(f"{where}.signature: must be a list of non-empty strings (`--update-known` writes it)")
    return Known(entry["id"], Verdict(entry["verdict"]), entry["reason"], tuple(sig) if sig is not None else None)


def unsigned(entries: dict[str, Known]) -> list[str]:
    """Ids of entries without a signature: a second bug on those cases would hide behind them."""
    return [case_id for case_id, known in entries.items() if known.signature is None]


def unsigned_notice(command: str, path: Path, entries: dict[str, Known]) -> str | None:
    """The stderr note for entries without a signature (they hold a verdict, not a bug), or None."""
    bare = unsigned(entries)
    if not bare:
        return None
    return (
        f"conformance {command}: note: {path}: {len(bare)} of {len(entries)} entries have no signature (first: "
        f"{bare[0]}): a second bug on those cases would hide behind them; `--update-known` adds signatures"
    )


def _signature_lines(sig: tuple[str, ...] | None) -> list[str]:
    """The signature as a TOML array, one part a line, so a review diff shows what grew."""
    if sig is None:
        return []
    return ["signature = [", *(f"  {_quote(part)}," for part in sig), "]"]


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


@dataclass
class KnownUpdate:
    """What `write_known` changed, by case id."""

    added: list[str] = field(default_factory=list)
    """New proxy bugs now accepted."""
    removed: list[str] = field(default_factory=list)
    """Entries dropped: the case ran and is no proxy bug any more."""
    changed: list[str] = field(default_factory=list)
    """Entries whose verdict changed (their reason is the new one)."""
    kept: list[str] = field(default_factory=list)
    """Entries kept as they were (among them those of cases this run did not include)."""

    @property
    def count(self) -> int:
        """Entries the file holds now."""
        return len(self.added) + len(self.changed) + len(self.kept)

    def summary(self, path: Path) -> str:
        """`conformance-known.toml: 3 entries (2 added, 1 removed, 0 changed, 1 kept)`."""
        return (
            f"{path}: {self.count} entr{'y' if self.count == 1 else 'ies'} ({len(self.added)} added, "
            f"{len(self.removed)} removed, {len(self.changed)} changed, {len(self.kept)} kept)"
        )


DEFAULT_HEADER = "# Proxy bugs accepted for now. `conformance run --update-known` rewrites this file."


def _header(path: Path) -> list[str]:
    """The file's leading comment block (a person's notes about the list), kept on rewrite; a default one else."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    head: list[str] = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            break
        head.append(line)
    while head and not head[-1].strip():
        head.pop()
    return [*(head or [DEFAULT_HEADER]), ""]


def write_known(path: Path, results: Iterable[CaseResult], previous: dict[str, Known]) -> KnownUpdate:
    """Rewrite the file with every current proxy bug (keeping earlier reasons); returns what changed."""
    update = KnownUpdate()
    entries: list[Known] = []
    ran: set[str] = set()
    for result in results:
        ran.add(result.case_id)
        old = previous.get(result.case_id)
        if not result.verdict.is_proxy_bug:
            if old is not None:
                update.removed.append(result.case_id)
            continue
        sig = signature(result)
        same_bug = old is not None and old.verdict == result.verdict
        # An entry written before signatures that holds the same verdict is kept (and gets its signature).
        same = same_bug and old is not None and old.signature in (None, sig)
        (update.kept if same else update.changed if old is not None else update.added).append(result.case_id)
        # A reason is a person's words about the bug: kept while the verdict is the same (review the diff when the
        # signature changed), the verdict's reason otherwise.
        reason = old.reason if old is not None and same_bug else result.reason
        entries.append(Known(result.case_id, result.verdict, reason, sig))
    # Entries for cases this run did not include (a narrower matrix) stay as they are.
    outside = [known for case_id, known in previous.items() if case_id not in ran]
    update.kept += [known.id for known in outside]
    lines = _header(path)
    # Entries stay where the file had them (a review diff shows only what changed); new ones follow, sorted.
    rank = {case_id: i for i, case_id in enumerate(previous)}
    for known in sorted([*entries, *outside], key=lambda k: (rank.get(k.id, len(rank)), k.id)):
        lines += [
            "[[case]]",
            f"id = {_quote(known.id)}",
            f"verdict = {_quote(known.verdict)}",
            f"reason = {_quote(known.reason)}",
            *_signature_lines(known.signature),
            "",
        ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return update
