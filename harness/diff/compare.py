"""Compare two normalized views with deepdiff; every divergence carries its path, both values and, for stream
events, the index of the event where the runs first part ways."""

from __future__ import annotations

import pickle
from dataclasses import asdict, dataclass
from typing import Any

from deepdiff import DeepDiff

from harness.diff import normalize
from harness.diff.normalize import Rule, View

_MISSING = "<missing>"


@dataclass(frozen=True)
class Divergence:
    """One place where two runs differ."""

    path: str
    """Where, as a JSON path like `events[3].text` or `response.stop_reason.kind`."""
    left: Any
    """Value on the reference side (`<missing>` when absent)."""
    right: Any
    """Value on the compared side (`<missing>` when absent)."""
    event_index: int | None
    """Index of the (normalized) stream event the path is in, when it is in one."""
    change: str
    """deepdiff's name for the change (values_changed, iterable_item_added, ...)."""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form for traces and reports."""
        return asdict(self)


def _path_text(parts: list[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_JSON_SCALARS = (str, int, float, bool, type(None))


def same(left: Any, right: Any) -> bool:
    """Equal JSON data with equal types throughout: what deepdiff finds nothing in (it reports 1 against 1.0 or
    True as a type change, which `==` does not see). Anything but dicts with string keys, lists and JSON scalars
    is not `same`."""
    if type(left) is not type(right):
        return False
    if type(left) is dict:
        keys_ok = left.keys() == right.keys() and all(type(key) is str for key in left)
        return keys_ok and all(same(value, right[key]) for key, value in left.items())
    if type(left) is list:
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    return type(left) in _JSON_SCALARS and bool(left == right)


def same_pickle(left: Any, right: Any) -> bool:
    """Whether the two values pickle to the same bytes: then they hold the same types (a subclass is pickled by
    name, 1, 1.0 and True each their own way) in the same shape, where deepdiff finds nothing. One C pass each,
    where `same` is a Python walk. Different bytes prove nothing (key order and shared objects show in a pickle,
    not in `same`), and neither does a value pickle cannot write: `same` then decides."""
    try:
        return pickle.dumps(left) == pickle.dumps(right)
    except (pickle.PicklingError, TypeError, AttributeError):  # not data: leave it to `same` and deepdiff
        return False


def diff_views(left: View, right: View) -> list[Divergence]:
    """All divergences between two (already normalized) views, first divergence first."""
    # Most cases agree: `==` and the pickles prove that far faster than deepdiff, which then only runs on a
    # difference (tests/diff/test_fast_paths.py holds the shortcut to what deepdiff alone finds).
    if left == right and (same_pickle(left, right) or same(left, right)):
        return []
    tree = DeepDiff(left, right, view="tree", ignore_order=False, verbose_level=2, cutoff_intersection_for_pairs=1)
    found: list[Divergence] = []
    for change, levels in tree.items():
        for level in levels:
            parts = level.path(output_format="list")
            index = parts[1] if len(parts) > 1 and parts[0] == "events" and isinstance(parts[1], int) else None
            left_v = level.t1 if type(level.t1).__name__ != "NotPresent" else _MISSING
            right_v = level.t2 if type(level.t2).__name__ != "NotPresent" else _MISSING
            found.append(Divergence(_path_text(parts), left_v, right_v, index, change))
    return sorted(found, key=_order)


def _order(d: Divergence) -> tuple[int, int, str]:
    # Stream events first (by index: the first diverging event leads), then the response, then the rest.
    if d.event_index is not None:
        return (0, d.event_index, d.path)
    return (1 if d.path.startswith("response") else 2, 0, d.path)


def normalize_pair(
    left: View, right: View, rules: tuple[Rule, ...] = normalize.DEFAULT_RULES, *, owned: bool = False
) -> tuple[View, View]:
    """Both views as they are compared: each normalized with `rules`, then the equivalences between the two
    (absent usage details read as 0, an error-first stream answered with its HTTP status, an incomplete stream
    told two ways) taken out. `owned`: the caller owns both views, which are then changed in place (otherwise
    each is copied once)."""
    a, b = (left, right) if owned else (normalize.json_copy(left), normalize.json_copy(right))
    each = tuple(rule for rule in rules if rule is not normalize.empty_text_blocks)
    a, b = normalize.apply(a, each, owned=True), normalize.apply(b, each, owned=True)
    if len(each) < len(rules):  # empty text blocks are an equivalence between the two runs, not of each
        a, b = normalize.empty_text_pair(a, b, owned=True)
    a, b = normalize.usage_details_zero(a, b, owned=True)
    if normalize.failed_before_content in rules:
        a, b = normalize.error_first_answered_with_status(a, b, owned=True)
    return normalize.incomplete_stream(a, b, owned=True)


def compare(left: View, right: View, rules: tuple[Rule, ...] = normalize.DEFAULT_RULES) -> list[Divergence]:
    """Normalize both views with `rules`, read absent usage details as 0, and diff them."""
    return diff_views(*normalize_pair(left, right, rules))
