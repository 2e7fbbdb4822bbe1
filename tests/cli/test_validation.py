"""Every input is checked before any case runs: the real commands (in-process `harness.cli.main`) exit 2 with one
clear line naming the file or option, the key and what is allowed, with the nearest name where one is close."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.protocols import registry
from harness.runner.plan import default_frontends
from tests.conftest import REPO

SCENARIOS = REPO / "scenarios"
CASSETTES = REPO / "cassettes"
PROTOCOLS = ", ".join(registry.names())
FRONTENDS = ", ".join(default_frontends())


def command(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run(capsys: pytest.CaptureFixture[str], tmp: Path, *args: str) -> tuple[int, str, str]:
    """`conformance run` on a one-scenario matrix of the repo's files, reports under tmp."""
    base = ["run", "--scenarios", str(SCENARIOS), "--cassettes", str(CASSETTES), "--reports", str(tmp / "reports")]
    return command(capsys, *base, "--run-id", "r", "-q", *args)


def small(*extra: str) -> list[str]:
    return ["--scenario", "text-basic", "--frontend", "openai", "--backend", "anthropic", *extra]


# -- the known-failures file ---------------------------------------------------------------------------------------


def known_file(tmp: Path, *entries: tuple[str, str, str]) -> Path:
    path = tmp / "known.toml"
    text = "".join(f'[[case]]\nid = "{i}"\nverdict = "{v}"\nreason = "{r}"\n\n' for i, v, r in entries)
    path.write_text(text, encoding="utf-8")
    return path


def test_known_failures_verdict_must_be_a_proxy_bug(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = known_file(tmp_path, ("text-basic[openai->anthropic,stream]", "banana", "r"))
    code, out, err = run(capsys, tmp_path, *small("--known", str(path)))
    assert (code, out) == (2, "")
    assert err == (
        f"conformance run: {path}: case[0].verdict: 'banana' is not allowed; "
        "allowed: proxy_bug_request or proxy_bug_response\n"
    )
    assert not (tmp_path / "reports").exists()  # nothing ran
    path = known_file(tmp_path, ("text-basic[openai->anthropic,stream]", "pass", "r"))
    code, _, err = run(capsys, tmp_path, *small("--known", str(path)))
    assert code == 2 and "case[0].verdict: 'pass' is not allowed" in err


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('[[case]]\nid = "text-basic"\nverdict = "proxy_bug_request"\nreason = "r"\n', "case[0].id: 'text-basic' is "
         "not a case id; allowed: <scenario>[<frontend>-><backend>,stream|nonstream]"),
        ('[[case]]\nid = "a[b->c,stream]"\nverdict = "proxy_bug_request"\nreason = "r"\nowner = "me"\n',
         "case[0].owner: unknown key; allowed: id, verdict, reason, signature"),
        ('[[case]]\nid = "a[b->c,stream]"\nverdict = "proxy_bug_request"\n', "case[0].reason: missing or empty; "
         "each entry needs a string reason"),
        ('[[case]]\nid = "a[b->c,stream]"\nverdict = "proxy_bug_request"\nreason = "r"\n' * 2,
         "case[1].id: 'a[b->c,stream]' is listed twice"),
        ('[case]\nid = "x"\n', "case: must be an array of tables ([[case]])"),
        ('[[cases]]\nid = "x"\n', "cases: unknown key; the file holds only [[case]] tables"),
    ],
    ids=["id", "extra-key", "no-reason", "twice", "not-array", "top-key"],
)  # fmt: skip
def test_known_failures_entry_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: str
) -> None:
    path = tmp_path / "known.toml"
    path.write_text(text, encoding="utf-8")
    code, _, err = run(capsys, tmp_path, *small("--known", str(path)))
    assert (code, err) == (2, f"conformance run: {path}: {line}\n")


def test_a_named_known_file_must_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.toml"
    code, out, err = run(capsys, tmp_path, *small("--known", str(missing)))
    assert (code, out) == (2, "")
    assert err == (
        f"conformance run: --known {missing}: no such file (omit --known to run without one; --update-known creates "
        "it)\n"
    )


def test_update_known_exits_0_once_written_and_says_what_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixed = "text-basic[openai->anthropic,stream]"  # passes now: its entry goes
    outside = "tool-call-single[gemini->ollama,nonstream]"  # not in this run's matrix: its entry stays
    path = known_file(tmp_path, (fixed, "proxy_bug_response", "was broken"), (outside, "proxy_bug_request", "keep"))
    code, out, err = run(capsys, tmp_path, *small("--known", str(path), "--update-known"))
    # Entries written before signatures hold a verdict only: the run says so (and the update adds signatures).
    assert (code, err) == (0, (
        f"conformance run: note: {path}: 2 of 2 entries have no signature (first: {fixed}): a second bug on those "
        "cases would hide behind them; `--update-known` adds signatures\n"
    ))
    assert out.splitlines()[-3:] == [
        f"known failures updated: {path}: 1 entry (0 added, 1 removed, 0 changed, 1 kept)",
        f"  - {fixed}",
        f"gate: PASS (exit 0) with the updated {path}: it accepts all 0 proxy bug(s) of this run "
        "(without the update: PASS as well)",
    ]
    text = path.read_text(encoding="utf-8")
    assert fixed not in text and f'id = "{outside}"\nverdict = "proxy_bug_request"\nreason = "keep"' in text
    created = tmp_path / "new.toml"
    code, out, _ = run(capsys, tmp_path, *small("--known", str(created), "--update-known", "--run-id", "r2"))
    assert code == 0 and created.is_file()
    assert (
        out.splitlines()[-2] == f"known failures updated: {created}: 0 entries (0 added, 0 removed, 0 changed, 0 kept)"
    )
    assert out.splitlines()[-1].startswith("gate: PASS (exit 0) with the updated ")


def test_update_known_checks_where_it_writes_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "known.toml"
    folder.mkdir()  # a folder where the file should be
    code, out, err = run(capsys, tmp_path, *small("--known", str(folder), "--update-known"))
    assert (code, out) == (2, "")
    assert err == f"conformance run: {folder}: not a readable TOML file: [Errno 21] Is a directory: '{folder}'\n"
    nowhere = tmp_path / "no-such-folder" / "known.toml"
    code, out, err = run(capsys, tmp_path, *small("--known", str(nowhere), "--update-known"))
    assert (code, out) == (2, "")
    assert err == f"conformance run: --update-known: {nowhere}: no folder {nowhere.parent} to write it in\n"
    assert not (tmp_path / "reports").exists()


# -- names ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--frontend", "groq"], f"frontend 'groq': a backend-only profile of openai (no proxy routes or SDK of its "
         f"own; the openai SDK drives it); frontends: {FRONTENDS}"),
        (["--frontend", "opnai"], f"frontend 'opnai': unknown protocol (did you mean 'openai'?); frontends: "
         f"{FRONTENDS}"),
        (["--backend", "antropic"], f"backend 'antropic': unknown protocol (did you mean 'anthropic'?); backends: "
         f"{PROTOCOLS}"),
        (["--scenario", "text-basi"], f"unknown scenario 'text-basi' (did you mean 'text-basic'?): not in {SCENARIOS} "
         "(see `conformance list scenarios`)"),
    ],
    ids=["backend-only-frontend", "frontend-typo", "backend-typo", "scenario-typo"],
)  # fmt: skip
def test_matrix_names(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], line: str) -> None:
    code, out, err = run(capsys, tmp_path, *args)
    assert (code, out, err) == (2, "", f"conformance run: {line}\n")


def test_a_protocol_without_frontend_routes_is_no_frontend(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = [n for n in registry.names() if registry.facts(n).frontend is None and registry.facts(n).sdk]
    if not names:
        pytest.skip("every protocol with an SDK of its own is a frontend now")
    name = names[0]
    code, _, err = run(capsys, tmp_path, "--frontend", name)
    assert code == 2
    assert err == (
        f"conformance run: frontend {name!r}: backend only: the proxy serves no frontend routes for it; "
        f"frontends: {FRONTENDS}\n"
    )


def test_other_commands_suggest_names_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = command(capsys, "record", "--backend", "opnai", "--scenarios", str(SCENARIOS))
    assert code == 2
    assert err.startswith("conformance record: unknown protocol 'opnai' (did you mean 'openai'?); known: ")
    code, _, err = command(capsys, "selftest", "--fault", "temperature-droped", "--reports", str(tmp_path))
    assert code == 2
    assert err.startswith(
        "conformance selftest: no fault named 'temperature-droped' (did you mean 'temperature-dropped'?); known: "
    )


# -- scenario files -------------------------------------------------------------------------------------------------


def test_bad_scenario_files_show_every_problem_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "scenarios"
    shutil.copytree(SCENARIOS, folder)
    data = yaml.safe_load((folder / "text-basic.yaml").read_text(encoding="utf-8"))
    data["requires"], data["streaming"] = ["telepathy"], ["sometimes"]
    (folder / "text-basic.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    data["id"], data["requires"], data["streaming"] = "tool-call-single", [], ["stream"]
    (folder / "renamed.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    code, out, err = command(capsys, "run", "--scenarios", str(folder), "--reports", str(tmp_path / "r"), "-q")
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0] == f"conformance run: {folder / 'renamed.yaml'}: id: 'tool-call-single' differs from the file " \
        "name; use id: renamed"  # fmt: skip
    assert lines[1].startswith(f"conformance run: {folder / 'text-basic.yaml'}: requires[0]: 'telepathy' is not one of")
    assert lines[2].startswith(
        f"conformance run: {folder / 'text-basic.yaml'}: streaming[0]: 'sometimes' is not one of"
    )
    assert len(lines) == 3
    assert not (tmp_path / "r").exists()


# -- the serve config -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "line"),
    [
        ("[upstreams.u]\nprotocol = 'opnai'\nbase_url = 'http://127.0.0.1:1'\n[models.m]\nmode = 'translate'\n"
         "upstream = 'u'\n", f"upstreams.u.protocol: unknown protocol 'opnai' (did you mean 'openai'?); known: "
         f"{PROTOCOLS}"),
        ("[models.m]\nmode = 'translate'\nprotocol = 'gemeni'\nbase_url = 'http://127.0.0.1:1'\n",
         f"models.m.protocol: unknown protocol 'gemeni' (did you mean 'gemini'?); known: {PROTOCOLS}"),
        ("[upstreams.main]\nprotocol = 'openai'\nbase_url = 'http://127.0.0.1:1'\n[models.m]\nmode = 'translate'\n"
         "upstream = 'mian'\n", "models.m.upstream: no upstream named 'mian' (did you mean 'main'?); known: main"),
        ("[models.m]\nmode = 'translate'\nprotocol = 'openai'\nbase_url = 'http://127.0.0.1:1'\n"
         "hooks = 'temperature-droped'\n", "models.m.hooks: no hooks named 'temperature-droped' (did you mean "
         "'temperature-dropped'?); allowed: "),
    ],
    ids=["upstream-protocol", "inline-protocol", "upstream-reference", "hooks"],
)  # fmt: skip
def test_serve_config_problems(tmp_path: Path, toml: str, line: str) -> None:
    """In a subprocess with a timeout: a config that passed would serve forever instead of failing the test."""
    path = tmp_path / "proxy.toml"
    path.write_text(toml, encoding="utf-8")
    serve = [sys.executable, "-m", "harness", "serve", "--config", str(path), "--port", "0"]
    done = subprocess.run(serve, cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"conformance serve: {path}: {line}") and done.stderr.count("\n") == 1


# -- sut-config -----------------------------------------------------------------------------------------------------


def sut_config(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    base = ["sut-config", "--scenarios", str(SCENARIOS), "--cassettes", str(CASSETTES), "--scenario", "text-basic"]
    return command(capsys, *base, "--backend", "openai", *args)


def test_sut_config_hooks_must_name_a_fault(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = sut_config(capsys, "--hooks", "no-such-fault")
    assert (code, out) == (2, "")
    assert err.startswith("conformance sut-config: --hooks 'no-such-fault': no fault of that name; allowed: identity, ")
    code, _, err = sut_config(capsys, "--hooks", "temperature-droped")
    assert code == 2 and "(did you mean 'temperature-dropped'?)" in err
    code, _, err = sut_config(capsys, "--hooks", "temperature-dropped", "--format", "litellm")
    assert (code, err) == (
        2,
        "conformance sut-config: --hooks 'temperature-dropped': only the conformance format switches hooks on, not "
        "litellm\n",
    )
    code, out, err = sut_config(capsys, "--hooks", "temperature-dropped")
    assert (code, err) == (0, "") and 'hooks = "temperature-dropped"' in out


def test_sut_config_backend_names(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = command(capsys, "sut-config", "--scenarios", str(SCENARIOS), "--backend", "mistrall")
    assert (code, err) == (
        2,
        f"conformance sut-config: backend 'mistrall': unknown protocol (did you mean 'mistral'?); backends: "
        f"{PROTOCOLS}\n",
    )


def test_selftest_writes_its_catch_matrix_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Covered in tests/faults/test_selftest_html.py; here only that the command names the page it wrote."""
    args = ["selftest", "--scenarios", str(SCENARIOS), "--cassettes", str(CASSETTES), "--reports", str(tmp_path)]
    code, out, _ = command(capsys, *args, "--quick", "--fault", "temperature-dropped", "--run-id", "t", "-q")
    page = tmp_path / "selftest-t" / "selftest.html"
    assert code == 0 and out.splitlines()[-1] == f"report: {page}"
    assert json.loads((tmp_path / "selftest-t" / "selftest.json").read_text())["score"] == {"caught": 1, "total": 1}
