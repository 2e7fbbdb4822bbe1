"""ARCHITECTURE.md's import rules, enforced: each part imports only the parts its row allows, and nothing
outside harness/protocols imports a protocol module by name (the engine goes through the registry)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import harness.protocols as protocols
from tests.conftest import REPO

HARNESS = REPO / "harness"

# part -> parts it may import (itself always allowed). Mirrors the table in ARCHITECTURE.md.
ALLOWED: dict[str, set[str]] = {
    "ir": set(),
    "wire": set(),
    "stream": {"ir"},
    "protocols": {"ir", "wire", "stream"},
    "capture": {"wire"},
    "trace": {"ir"},
    "diff": {"ir"},
    "scenarios": {"ir", "drivers"},
    "drivers": {"ir", "scenarios", "protocols"},
    "backends": {"ir", "wire", "protocols", "scenarios"},
    "record": {"ir", "wire", "protocols", "backends", "scenarios"},
    "proxy": {"ir", "wire", "stream", "protocols"},
    "runner": {"ir", "stream", "protocols", "proxy", "record", "backends", "scenarios", "drivers", "trace", "diff"},
    "report": {"ir", "trace", "diff", "runner"},
    "faults": {"ir", "wire", "diff", "proxy", "runner", "scenarios", "trace"},
}
# Modules of harness/protocols that the rest of the harness may use: the contract, the registry, shared helpers.
PROTOCOLS_PUBLIC = {
    "harness.protocols",
    "harness.protocols.base",
    "harness.protocols.registry",
    "harness.protocols.common",
    "harness.protocols.http",
    "harness.protocols.reference",
    "harness.protocols.shape",
    "harness.protocols.fidelity",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return {name for name in found if name.startswith("harness.")}


def _part(module: str) -> str:
    return module.split(".")[1]


PARTS = sorted(ALLOWED)


@pytest.mark.parametrize("part", PARTS)
def test_part_imports_only_what_architecture_allows(part: str) -> None:
    bad = []
    for path in sorted((HARNESS / part).rglob("*.py")):
        for module in _imports(path):
            target = _part(module)
            if target != part and target in ALLOWED and target not in ALLOWED[part]:
                bad.append(f"{path.relative_to(REPO)} imports {module}")
    assert bad == []


def test_every_part_has_a_rule() -> None:
    parts = {p.name for p in HARNESS.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert parts - {"cli"} == set(ALLOWED)


def test_nothing_outside_protocols_imports_a_protocol_by_name() -> None:
    bad = []
    for path in sorted(HARNESS.rglob("*.py")):
        if (HARNESS / "protocols") in path.parents:
            continue
        for module in _imports(path):
            if not module.startswith("harness.protocols.") or module in PROTOCOLS_PUBLIC:
                continue
            parent, name = module.rsplit(".", 1)
            if parent in PROTOCOLS_PUBLIC - {"harness.protocols"} or name in protocols.__all__:
                continue  # a name from a public module (`from harness.protocols.registry import X`)
            bad.append(f"{path.relative_to(REPO)} imports {module}")
    assert bad == []


def test_architecture_doc_lists_every_part() -> None:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for part in [*ALLOWED, "cli"]:
        assert f"`harness/{part}`" in text
