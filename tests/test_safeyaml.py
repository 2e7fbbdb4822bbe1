"""A YAML alias bomb ("billion laughs") in a capture, a cassette or a scenario is refused in one line, before it is
built, by the one bounded loader (issue 22: 700 bytes grew past 11 GB)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from harness import safeyaml
from harness.capture import CaptureError, load_interactions
from harness.record.serializer import deserialize
from harness.scenarios.loader import ScenarioError, load_scenarios

LEVELS = "abcdefghi"


def bomb(prefix: str = "") -> str:
    lines = [f'{prefix}a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for previous, name in itertools.pairwise(LEVELS):
        lines.append(f"{prefix}{name}: &{name} [{','.join([f'*{previous}'] * 9)}]")
    return "\n".join(lines) + "\n"


def test_yaml_alias_bomb_is_refused_by_the_loader() -> None:
    assert len(bomb()) < 700
    with pytest.raises(safeyaml.YamlBombError, match="alias"):
        safeyaml.load(bomb())


def test_a_few_real_aliases_still_load() -> None:
    assert safeyaml.load("x: &x {k: [1, 2]}\ny: *x\nz: '&not an anchor'\n") == {
        "x": {"k": [1, 2]},
        "y": {"k": [1, 2]},
        "z": "&not an anchor",
    }


def test_yaml_alias_bomb_in_a_capture_is_a_capture_error(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text("interactions: []\n" + bomb(), encoding="utf-8")
    with pytest.raises(CaptureError, match="alias bomb"):
        load_interactions(path)


def test_yaml_alias_bomb_in_a_cassette_is_refused() -> None:
    with pytest.raises(ValueError, match="alias bomb"):
        deserialize("interactions: []\n" + bomb())


def test_yaml_alias_bomb_in_a_scenario_is_a_scenario_error(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text("id: bomb\n" + bomb(), encoding="utf-8")
    with pytest.raises(ScenarioError, match="alias bomb"):
        load_scenarios(tmp_path)
