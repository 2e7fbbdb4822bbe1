"""Loading `scenarios/*.yaml`: YAML -> JSON Schema validation -> pydantic models, with errors that name the spot.

The JSON Schema is generated from `harness.scenarios.model` at load time, so the models stay the one source of
truth; `scenario_json_schema()` exposes it for editors and documentation.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from pydantic import ValidationError

from harness.scenarios.model import ReplyOk, Scenario
from harness.scenarios.script import scripted_events


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message reads `<file>: <path>: <problem>`."""

    def __init__(self, file: Path | str, path: str, problem: str) -> None:
        super().__init__(f"{file}: {path}: {problem}")
        self.file = str(file)
        self.path = path
        self.problem = problem


@functools.cache
def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema of one scenario file, generated from the pydantic models."""
    schema = Scenario.model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Conformance scenario"
    return schema


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(scenario_json_schema())


def _format_path(parts: Iterable[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "$"


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(path, "$", f"cannot read the file: {exc}") from exc
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "$"
        raise ScenarioError(path, where, f"not valid YAML: {exc.problem}") from exc
    except yaml.YAMLError as exc:
        raise ScenarioError(path, "$", f"not valid YAML: {exc}") from exc


def _check_schema(path: Path, data: Any) -> None:
    error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
    if error is not None:
        raise ScenarioError(path, _format_path(error.absolute_path), error.message)


def _check_model(path: Path, data: Any) -> Scenario:
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        # pydantic adds the union tag (e.g. `ok`) and validator names to locations; keep the data path only.
        loc = [p for p in first["loc"] if not (isinstance(p, str) and (p in ("ok", "error", "models") or "[" in p))]
        message = first["msg"].removeprefix("Value error, ")
        raise ScenarioError(path, _format_path(loc), message) from exc


def load_scenario(path: Path) -> Scenario:
    """Load and validate one scenario file (YAML, JSON Schema, model rules, scripted stream in range)."""
    data = _read_yaml(path)
    if not isinstance(data, dict):
        raise ScenarioError(path, "$", f"a scenario file holds a mapping, not {type(data).__name__}")
    _check_schema(path, data)
    scenario = _check_model(path, data)
    if isinstance(scenario.reply, ReplyOk):
        try:
            scripted_events(scenario.reply, scenario.chunking)
        except ValueError as exc:
            raise ScenarioError(path, "reply", str(exc)) from exc
    return scenario


def load_scenarios(folder: Path | str) -> list[Scenario]:
    """Every `*.yaml` scenario in `folder`, sorted by id; raises `ScenarioError` on the first bad file."""
    root = Path(folder)
    if not root.is_dir():
        raise ScenarioError(root, "$", "scenario folder not found")
    seen: dict[str, Path] = {}
    scenarios: list[Scenario] = []
    for path in sorted(root.glob("*.yaml")):
        scenario = load_scenario(path)
        if scenario.id in seen:
            raise ScenarioError(path, "id", f"duplicate id {scenario.id!r}, also in {seen[scenario.id]}")
        seen[scenario.id] = path
        scenarios.append(scenario)
    return sorted(scenarios, key=lambda s: s.id)


def select(scenarios: Sequence[Scenario], only: Iterable[str] | None) -> list[Scenario]:
    """The scenarios named in `only` (all when it is None or empty), in their order; ValueError names the ids
    that are not there."""
    wanted = set(only or ())
    unknown = wanted - {s.id for s in scenarios}
    if unknown:
        raise ValueError(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    return [s for s in scenarios if not wanted or s.id in wanted]
