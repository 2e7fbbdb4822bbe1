"""The one YAML loader for data the harness reads (captures, cassettes, scenarios): safe types only, and a bounded
cost. An alias repeats its anchor's whole subtree, so a few hundred bytes of nested aliases ("billion laughs")
expand to gigabytes; a document whose aliases would expand it beyond `MAX_EXPANDED_NODES` is refused with one
line before it is built. Plain documents (no anchor) skip the count."""

from __future__ import annotations

import re
from typing import Any

import yaml

MAX_EXPANDED_NODES = 1_000_000
"""Nodes a document may hold once every alias is expanded (a large real cassette holds a few thousand)."""

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_ANCHOR = re.compile(r"(?:^|[\s\[{,])&[^\s\[\]{},]")  # a possible `&anchor` token; a quoted '&x' only costs a scan


class YamlBombError(ValueError):
    """A document whose aliases expand it beyond the budget."""


def check_aliases(text: str | bytes, limit: int = MAX_EXPANDED_NODES) -> None:
    """Raise `YamlBombError` if `text`, with its aliases expanded, would hold more than `limit` nodes.

    Counts over the parser's events (no document is built): each anchored node's expanded size is remembered, an
    alias adds that size. `yaml.YAMLError` passes through for malformed text."""
    sample = text if isinstance(text, str) else text.decode("utf-8", "replace")
    if "&" not in sample or not _ANCHOR.search(sample):  # `in` first: no committed cassette holds an "&" at all,
        return  # and the search costs ~0.09 ms a cassette (8 % of loading them)
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = [[None, 0]]  # [anchor, nodes so far] per open collection
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent):
            add = sizes.get(event.anchor or "", 1)
        elif isinstance(event, yaml.ScalarEvent):
            add = 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            stack.append([event.anchor, 1])
            continue
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, add = stack.pop()
            if anchor:
                sizes[anchor] = add
        else:
            continue
        stack[-1][1] += add
        if sum(frame[1] for frame in stack) > limit:
            raise YamlBombError(f"YAML aliases expand beyond {limit} nodes (an alias bomb?); refused")


def load(text: str | bytes) -> Any:
    """`yaml.safe_load` with the alias budget; raises `YamlBombError` or `yaml.YAMLError`."""
    check_aliases(text)
    return yaml.load(text, Loader=_LOADER)
