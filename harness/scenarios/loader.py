"""Loading `scenarios/*.yaml`: YAML -> JSON Schema validation -> pydantic models, with errors that name the spot.

The JSON Schema is generated from `harness.scenarios.model` at load time, so the models stay the one source of
truth; `scenario_json_schema()` exposes it for editors and documentation.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from pydantic import ValidationError

from harness import safeyaml
from harness.scenarios.layers import Layers, scenario_sources
from harness.scenarios.model import ReplyOk, Scenario
from harness.scenarios.script import scripted_events


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message reads `<file>: <path>: <problem>`, one line per problem
    when there are several (`problems`), so a user fixes a file in one go."""

    def __init__(self, file: Path | str, path: str, problem: str) -> None:
        super().__init__(f"{file}: {path}: {problem}")
        self.file = str(file)
        self.path = path
        """Where the first problem is (a dotted data path, `$` for the whole file)."""
        self.problem = problem
        """The first problem."""
        self.problems: tuple[ScenarioError, ...] = (self,)
        """Every problem found, in file and data order."""

    @classmethod
    def of(cls, problems: Sequence[ScenarioError]) -> ScenarioError:
        """One error carrying several problems (the first one's file, path and problem; every line in its text)."""
        if len(problems) == 1:
            return problems[0]
        first = problems[0]
        error = cls(first.file, first.path, first.problem)
        error.args = ("\n".join(str(p) for p in problems),)
        error.problems = tuple(problems)
        return error


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
        return safeyaml.load(text)
    except safeyaml.YamlBombError as exc:
        raise ScenarioError(path, "$", str(exc)) from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "$"
        raise ScenarioError(path, where, f"not valid YAML: {exc.problem}") from exc
    except yaml.YAMLError as exc:
        raise ScenarioError(path, "$", f"not valid YAML: {exc}") from exc


def _schema_problems(path: Path, data: Any) -> list[ScenarioError]:
    """Every schema violation, one per data path; a failed `oneOf`/`anyOf` reports its most relevant branch."""
    found: dict[str, ScenarioError] = {}
    for error in _validator().iter_errors(data):
        best = jsonschema.exceptions.best_match(error.context) if error.context else error
        where = _format_path((best or error).absolute_path)
        found.setdefault(where, ScenarioError(path, where, (best or error).message))
    return sorted(found.values(), key=lambda e: (e.path != "$", e.path))


def _model_problems(path: Path, data: Any) -> tuple[Scenario | None, list[ScenarioError]]:
    try:
        return Scenario.model_validate(data), []
    except ValidationError as exc:
        problems: dict[str, ScenarioError] = {}
        for error in exc.errors():
            # pydantic adds the union tag (e.g. `ok`) and validator names to locations; keep the data path only.
            loc = [p for p in error["loc"] if not (isinstance(p, str) and (p in ("ok", "error", "models") or "[" in p))]
            where = _format_path(loc)
            problems.setdefault(where, ScenarioError(path, where, error["msg"].removeprefix("Value error, ")))
        return None, list(problems.values())


def _id_problem(path: Path, data: dict[str, Any]) -> list[ScenarioError]:
    """The id must be the file name: `--scenario ID`, cassette names and the report link to the file by it."""
    value = data.get("id")
    if isinstance(value, str) and value != path.stem:
        return [ScenarioError(path, "id", f"{value!r} differs from the file name; use id: {path.stem}")]
    return []


def load_scenario(path: Path) -> Scenario:
    """Load and validate one scenario file (YAML, JSON Schema, model rules, scripted stream in range, id equal to
    the file name); every problem found is in the one `ScenarioError` raised."""
    data = _read_yaml(path)
    if not isinstance(data, dict):
        raise ScenarioError(path, "$", f"a scenario file holds a mapping, not {type(data).__name__}")
    problems = _schema_problems(path, data)
    scenario = None
    if not problems:
        scenario, problems = _model_problems(path, data)
    if scenario is not None and isinstance(scenario.reply, ReplyOk):
        replies = [*((f"steps[{n}].reply", s.reply) for n, s in enumerate(scenario.steps)), ("reply", scenario.reply)]
        for where, reply in replies:
            try:
                scripted_events(reply, scenario.chunking)
            except ValueError as exc:
                problems.append(ScenarioError(path, where, str(exc)))
    problems += _id_problem(path, data)
    if problems or scenario is None:
        raise ScenarioError.of(problems)
    return scenario


def load_scenarios(folder: Path | str | Layers) -> list[Scenario]:
    """Every `*.yaml` scenario in `folder` (or in its layers, the first layer holding an id winning), sorted by
    id; raises one `ScenarioError` with the problems of every bad file."""
    if isinstance(folder, Layers):
        for root in folder.missing():
            raise ScenarioError(root, "$", "scenario folder not found")
        paths = [source.path for source in scenario_sources(folder)]
    else:
        root = Path(folder)
        if not root.is_dir():
            raise ScenarioError(root, "$", "scenario folder not found")
        paths = sorted(root.glob("*.yaml"))
    scenarios: list[Scenario] = []
    problems: list[ScenarioError] = []
    for path in paths:
        try:
            scenarios.append(load_scenario(path))
        except ScenarioError as exc:
            problems += exc.problems
    if problems:
        raise ScenarioError.of(problems)
    return sorted(scenarios, key=lambda s: s.id)


def select(
    scenarios: Sequence[Scenario], only: Iterable[str] | None, *, folder: Path | str | Layers | None = None
) -> list[Scenario]:
    """The scenarios named in `only` (all when it is None or empty), in their order; ValueError names each id
    that is not there with the nearest one, and the folder they were looked for in."""
    ids = [s.id for s in scenarios]
    unknown = sorted(set(only or ()) - set(ids))
    if unknown:
        shown = ", ".join(str(f) for f in folder.folders) if isinstance(folder, Layers) else folder
        where = f"not in {shown}" if folder is not None else "not loaded"
        raise ValueError(f"{unknown_names('scenario', unknown, ids)}: {where} (see `conformance list scenarios`)")
    wanted = set(only or ())
    return [s for s in scenarios if not wanted or s.id in wanted]


def unknown_names(what: str, unknown: Sequence[str], known: Sequence[str]) -> str:
    """`unknown scenario 'text-basi' (did you mean 'text-basic'?)`, for each name not among `known`."""
    parts = []
    for name in unknown:
        near = difflib.get_close_matches(name, known, n=1)
        parts.append(f"{name!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
    return f"unknown {what}{'s' if len(parts) > 1 else ''} {', '.join(parts)}"
