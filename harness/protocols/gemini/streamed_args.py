"""A function call whose arguments Vertex streams (`toolConfig.functionCallingConfig.streamFunctionCallArguments`).

The wire (vercel/ai's recorded `google-stream-tool-call-arguments`, `google-vertex-stream-tool-call-arguments-nested`):
a `functionCall` with the `name` and `willContinue: true` opens the call; the next `functionCall`s carry no name,
only `partialArgs` entries, each a `jsonPath` (`$.recipe.ingredients[0].name`) and one of `stringValue`,
`numberValue`, `boolValue`, `nullValue`; a string entry with `willContinue: true` is continued by the next entry
of the same path (an empty `stringValue` ends it). The call ends with the first `functionCall` without
`willContinue` (an empty `{}`, or the last `partialArgs` chunk). The arguments are known only then, so the IR
call (whose implied id depends on them) is emitted whole at that point.
"""

from __future__ import annotations

import re
from typing import Any

from harness.protocols.gemini.fields import as_list, as_object, as_str, fail, get, has, opt_bool

_STEP = re.compile(r"\.([A-Za-z_][\w-]*)|\[(\d+)\]|\[\"([^\"]*)\"\]|\['([^']*)'\]")
_VALUES = ("stringValue", "numberValue", "boolValue", "nullValue")


class StreamedCall:
    """The name and arguments of one function call being streamed, as its chunks arrive."""

    def __init__(self, name: str, call_id: str | None) -> None:
        self.name = name
        self.id = call_id
        self.args: dict[str, Any] = {}
        self._continued: set[str] = set()  # paths whose string the next entry continues

    def add(self, call: dict[str, Any], where: str) -> None:
        """Apply one continuation chunk's `partialArgs`."""
        for i, value in enumerate(as_list(get(call, "partialArgs") or [], f"{where}.partialArgs")):
            entry = as_object(value, f"{where}.partialArgs[{i}]")
            self._entry(entry, f"{where}.partialArgs[{i}]")

    def _entry(self, entry: dict[str, Any], where: str) -> None:
        path = as_str(get(entry, "jsonPath"), f"{where}.jsonPath")
        kinds = [k for k in _VALUES if has(entry, k)]
        if len(kinds) != 1:
            raise fail(f"{where}: expected one of {', '.join(_VALUES)}, got {sorted(entry)}")
        value = None if kinds[0] == "nullValue" else get(entry, kinds[0])
        if kinds[0] == "stringValue" and path in self._continued:
            value = _get(self.args, path, where) + as_str(value, f"{where}.stringValue")
        _set(self.args, path, value, where)
        if opt_bool(get(entry, "willContinue"), f"{where}.willContinue"):
            self._continued.add(path)
        else:
            self._continued.discard(path)


def _steps(path: str, where: str) -> list[str | int]:
    if not path.startswith("$"):
        raise fail(f"{where}.jsonPath: {path!r} does not start at $")
    steps: list[str | int] = []
    at = 1
    while at < len(path):
        match = _STEP.match(path, at)
        if match is None:
            raise fail(f"{where}.jsonPath: {path!r} is not a path of keys and indexes")
        key, index, quoted, single = match.groups()
        steps.append(int(index) if index is not None else (key or quoted or single or ""))
        at = match.end()
    if not steps:
        raise fail(f"{where}.jsonPath: {path!r} names no argument")
    return steps


def _set(args: dict[str, Any], path: str, value: Any, where: str) -> None:
    steps = _steps(path, where)
    node: Any = args
    for step, following in zip(steps, [*steps[1:], None], strict=True):
        if following is None:
            _put(node, step, value, where)
            return
        child = _at(node, step)
        if child is None:
            child = [] if isinstance(following, int) else {}
            _put(node, step, child, where)
        node = child


def _get(args: dict[str, Any], path: str, where: str) -> str:
    node: Any = args
    for step in _steps(path, where):
        node = _at(node, step)
    return as_str(node, f"{where}: the string {path} continues")


def _at(node: Any, step: str | int) -> Any:
    if isinstance(step, int):
        return node[step] if isinstance(node, list) and step < len(node) else None
    return node.get(step) if isinstance(node, dict) else None


def _put(node: Any, step: str | int, value: Any, where: str) -> None:
    if isinstance(step, str) and isinstance(node, dict):
        node[step] = value
    elif isinstance(step, int) and isinstance(node, list) and step <= len(node):
        node[step : step + 1] = [value]
    else:
        raise fail(f"{where}.jsonPath: step {step!r} does not fit the arguments built so far")
