"""ARCHITECTURE.md's rules, enforced: each part imports only the parts its row allows; nothing outside
harness/protocols imports a protocol module by name (the engine goes through the registry); no module-level import
cycle; and no protocol or provider name is written outside harness/protocols and the SDK drivers (the rest of the
harness reads protocol facts through the registry). ARCHITECTURE.md itself stays an orientation (short, with short
table rows), and its table, its picture of the layers and its list of name exceptions say what this file holds."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import harness.protocols as protocols
from harness.protocols import registry
from tests.conftest import REPO

HARNESS = REPO / "harness"

# part -> parts it may import (itself always allowed). ARCHITECTURE.md's table and picture say the same (tested).
ALLOWED: dict[str, set[str]] = {
    "ir": set(),
    "wire": set(),
    "stream": {"ir"},
    "protocols": {"ir", "wire", "stream"},
    "capture": {"wire"},
    "trace": {"ir"},
    "checks": {"ir", "stream", "protocols", "trace", "scenarios", "drivers"},
    "diff": {"ir", "stream", "protocols", "trace", "checks"},
    "scenarios": {"ir", "drivers"},
    "drivers": {"ir", "scenarios", "protocols"},
    "backends": {"ir", "wire", "protocols", "scenarios"},
    "record": {"ir", "wire", "protocols", "backends", "scenarios", "trace"},
    "proxy": {"ir", "wire", "stream", "protocols"},
    "rig": {"ir", "protocols", "proxy", "record", "backends", "scenarios", "trace"},
    "runner": {
        "ir",
        "stream",
        "protocols",
        "proxy",
        "record",
        "scenarios",
        "drivers",
        "trace",
        "diff",
        "rig",
        "checks",
    },
    "gateways": {"ir", "protocols", "scenarios", "trace", "rig"},
    "importer": {"ir", "stream", "protocols", "capture", "record", "backends", "scenarios", "drivers", "rig"},
    "report": {"ir", "trace", "diff", "runner", "checks"},
    "faults": {"ir", "wire", "diff", "proxy", "runner", "scenarios", "trace"},
    "pytest_plugin": {"rig", "protocols", "proxy", "runner", "scenarios", "trace"},
    "fuzz": {"ir", "proxy", "record", "runner", "scenarios", "trace", "importer", "rig"},
    "interop": {"protocols", "proxy", "backends"},
}
# Modules of harness/protocols that the rest of the harness may use: the contract, the registry, the facts types,
# shared helpers.
PROTOCOLS_PUBLIC = {
    "harness.protocols",
    "harness.protocols.base",
    "harness.protocols.registry",
    "harness.protocols.facts",
    "harness.protocols.common",
    "harness.protocols.reference",
    "harness.protocols.shape",
    "harness.protocols.fidelity",
    "harness.protocols.corpus",
    "harness.protocols.wire_schema",
}

# Where a protocol or provider name may be written: the protocols themselves and the SDK drivers (one per SDK).
NAMES_ALLOWED_IN = ("protocols", "drivers")
# Modules outside those that may still name protocols, each with the reason.
NAME_EXCEPTIONS: dict[str, str] = {
    "harness/faults/catalog.py": "each fault is a real bug of one protocol pair; its witnesses name that pair",
    "harness/faults/hooks.py": "a fault acts on one protocol's wire (DONE after an Anthropic stream, Gemini's "
    "functionResponse.name); the hook says which",
    "harness/faults/gateway_catalog.py": "each fault is a real gateway's bug on one protocol pair; its witnesses "
    "name that pair",
    **{
        f"harness/gateways/{gateway}.py": "a gateway's own knowledge: how it names the protocols it serves and reaches"
        for gateway in (
            "litellm",
            "louter",
            "portkey",
            "ccr",
            "codex_rosetta",
            "mlflow",
            "nullplatform",
            "open_responses_server",
        )
    },
    "harness/faults/gateway_hooks.py": "a fault acts on one protocol's wire (a Gemini stream's error chunk, an "
    "OpenAI stream's tool-call index); the hook says which",
    "harness/faults/responses_hooks.py": "the Responses API faults act on the Responses wire only, when the client "
    "speaks it",
    "harness/faults/converse_workers_swink_catalog.py": "the faults of Bedrock, Workers AI and swink: each names its "
    "protocol",
    "harness/checks/builtin.py": "a check's why cites the provider and the real bug it rests on (its evidence)",
    "harness/checks/wire.py": "a check's why cites the provider and the real bug it rests on (its evidence)",
    "harness/checks/answer.py": "a check's why cites the provider and the real bug it rests on (its evidence)",
    "harness/checks/upstream.py": "a check's why cites the provider and the real bug it rests on (its evidence)",
    "harness/checks/spec.py": "a check's why cites the provider and the real bug it rests on (its evidence)",
    "harness/checks/across_runs.py": "a check's why cites the provider and the real bug it rests on (its evidence)",
    "harness/checks/raw_fields.py": "a check's why cites the provider and the real bug it rests on (its evidence)",
    "harness/checks/chain.py": "a check's why cites the provider and the real bug it rests on (its evidence)",
    "harness/faults/answer_hooks.py": "each fault acts only where its client speaks the protocol whose spec it "
    "breaks; the hook says which",
    "harness/faults/upstream_hooks.py": "each fault acts on the upstream where its bug was seen (the Anthropic "
    "API's beta header and unknown-field rule); the hook says which",
    "harness/faults/converse_workers_swink_hooks.py": "each of those faults acts only where its protocol is the "
    "frontend or the upstream; the hook says which",
}
# Provider words that are not registry names but name a provider all the same.
PROVIDER_WORDS = {"google", "genai", "claude"}


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


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(path: Path, known: set[str]) -> set[str]:
    """The harness modules a module imports, at load or inside functions (`if TYPE_CHECKING:` blocks aside, which
    never run): `from pkg import name` counts as importing `pkg.name` when that is a module, else `pkg`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in known else node.module)
    return {name for name in found if name in known}


def test_no_import_cycle() -> None:
    paths = {_module_name(p): p for p in HARNESS.rglob("*.py")}
    graph = {name: _runtime_imports(path, set(paths)) - {name} for name, path in paths.items()}
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*trail[trail.index(target) :], target]))
            elif target not in state:
                visit(target, [*trail, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def _docstrings(tree: ast.AST) -> set[int]:
    """Ids of the string constants that are docstrings (of modules, classes, functions, attributes)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for statement in body:
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                    out.add(id(statement.value))
    return out


def protocol_name_literals(path: Path, names: set[str]) -> list[str]:
    """`line: text` of each string literal (docstrings aside) in which a protocol or provider name is a word."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            words = set(re.split(r"[^a-z0-9]+", node.value.lower()))
            if words & names:
                found.append(f"{node.lineno}: {node.value[:60]!r}")
    return found


def test_no_protocol_or_provider_name_outside_protocols_and_drivers() -> None:
    names = set(registry.names()) | PROVIDER_WORDS
    bad = []
    for path in sorted(HARNESS.rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if path.relative_to(HARNESS).parts[0] in NAMES_ALLOWED_IN or relative in NAME_EXCEPTIONS:
            continue
        bad += [f"{relative}:{hit}" for hit in protocol_name_literals(path, names)]
    assert bad == []


def test_the_name_rule_finds_a_name(tmp_path: Path) -> None:
    # The rule must be able to fail: a literal naming a protocol is found; docstrings and other words are not.
    module = tmp_path / "m.py"
    module.write_text('"""Talks about openai."""\nX = "openai"\nY = "x-api-key"\nZ = f"{X}/gemini-2.5"\n')
    assert protocol_name_literals(module, {"openai", "gemini"}) == ["2: 'openai'", "4: '/gemini-2.5'"]


def test_every_name_exception_exists_and_still_names_a_protocol() -> None:
    names = set(registry.names()) | PROVIDER_WORDS
    for relative, reason in NAME_EXCEPTIONS.items():
        assert reason
        assert protocol_name_literals(REPO / relative, names), f"{relative} no longer needs its exception"


def test_architecture_doc_lists_every_part() -> None:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for part in [*ALLOWED, "cli"]:
        assert f"`harness/{part}`" in text


ARCHITECTURE_DOC = REPO / "ARCHITECTURE.md"
DOC_WORDS = 2000
"""ARCHITECTURE.md is an orientation readable in five minutes: under this many words (`wc -w`)."""
DOC_ROW = 160
"""The longest table row ARCHITECTURE.md may have, in characters: detail belongs in docs/*.md."""


def _doc_section(heading: str) -> str:
    """The text of ARCHITECTURE.md under `heading` (a whole heading line), up to the next heading."""
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    assert f"\n{heading}\n" in text, f"ARCHITECTURE.md has no {heading!r}"
    body = text.split(f"\n{heading}\n", 1)[1]
    return re.split(r"\n#+ ", body, maxsplit=1)[0]


def test_architecture_doc_is_short_with_short_table_rows() -> None:
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    assert len(text.split()) < DOC_WORDS
    long_rows = [row[:60] for row in text.splitlines() if row.startswith("|") and len(row) > DOC_ROW]
    assert long_rows == []


def test_architecture_doc_table_says_what_each_part_may_import() -> None:
    rows = {}
    for row in _doc_section("## Parts and what each may import").splitlines():
        found = re.match(r"\| `harness/(\w+)` \|.*\| ([^|]*) \|$", row)
        if found:
            rows[found.group(1)] = found.group(2)
    assert set(rows) == {*ALLOWED, "cli"}
    assert rows["cli"] == "everything"
    for part, allowed in ALLOWED.items():
        named = set(re.findall(r"\w+", rows[part])) - {"nothing"}
        assert named == allowed, part


def test_architecture_doc_layers_put_each_import_below() -> None:
    # The picture of the layers: each part on one line, every part it may import on a lower line (or on its own
    # line when the two may import each other); cli may import every part.
    picture = _doc_section("## The layers").split("```")[1]
    line_of: dict[str, int] = {}
    for number, line in enumerate(picture.splitlines()):
        for word in re.findall(r"\w+", line):
            if word in {*ALLOWED, "cli"}:
                assert word not in line_of, f"{word} is on two lines"
                line_of[word] = number
    assert set(line_of) == {*ALLOWED, "cli"}
    assert line_of["cli"] < min(line_of[part] for part in ALLOWED)
    for part, allowed in ALLOWED.items():
        for target in allowed:
            below = line_of[target] > line_of[part]
            mutual = line_of[target] == line_of[part] and part in ALLOWED[target]
            assert below or mutual, f"{part} imports {target}, which is not below it"


def test_architecture_doc_lists_every_name_exception() -> None:
    listed = set(re.findall(r"`(\w+/[\w/]+\.py)`", _doc_section("### The name rule")))
    assert listed == {path.removeprefix("harness/") for path in NAME_EXCEPTIONS}


def test_architecture_doc_names_the_public_protocol_modules() -> None:
    section = _doc_section("### Protocols are private")
    for module in PROTOCOLS_PUBLIC - {"harness.protocols"}:
        assert f"`{module.rsplit('.', 1)[1]}`" in section, module
