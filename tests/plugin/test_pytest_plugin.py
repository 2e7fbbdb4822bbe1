"""The pytest plugin end to end with pytester on the repo's scenarios and cassettes: one item per case with the
case id, verdicts as outcomes (pass, skip, xfail, fail with the first divergence), provider markers, CLI over
ini, the fixture, and trace output. Matrices stay small: one or two scenarios, one frontend, two backends."""

from __future__ import annotations

import shlex
import shutil

import pytest

import harness.pytest_plugin.items  # noqa: F401
from harness import drivers
from harness.protocols import registry
from harness.report import events_for_run
from harness.runner.plan import default_frontends
from tests.plugin.conftest import CASSETTES, PLUGIN, SCENARIOS, matrix

pytest_plugins = ["pytester"]

# pytester's in-process runs drop every module first imported inside a run. The engine loads protocols and SDK
# drivers lazily, and a protocol module imported afresh would register its codec a second time: load them all
# here, outside the runs, so every run shares them.
registry.names()
for _name in drivers.names():
    drivers.get(_name)

TEXT_BASIC_IDS = [
    "conformance::text-basic[openai->anthropic,stream]",
    "conformance::text-basic[openai->anthropic,nonstream]",
    "conformance::text-basic[openai->openai,stream]",
    "conformance::text-basic[openai->openai,nonstream]",
]

DROP_TOOLS_CONFTEST = """
from harness.proxy import TranslateHooks

def pytest_conformance_translate_hooks(config):
    # The injected proxy bug: the translate path forgets the client's tools.
    return TranslateHooks(on_upstream_request=lambda request: request.model_copy(update={"tools": []}))
"""

SHOUT_CONFTEST = """
from harness import ir
from harness.proxy import TranslateHooks

def shout(event):
    if isinstance(event, ir.TextDelta):
        return (event.model_copy(update={"text": event.text.upper()}),)
    return (event,)

def pytest_conformance_translate_hooks(config):
    return TranslateHooks(on_upstream_event=shout)
"""


def collected_ids(result: pytest.RunResult) -> list[str]:
    """Node ids printed by `--collect-only -q`."""
    return [line for line in result.outlines if line.startswith("conformance::")]


def test_collection_yields_one_item_per_case_with_the_case_id(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*matrix("text-basic"), "--collect-only", "-q")
    assert collected_ids(result) == TEXT_BASIC_IDS
    assert result.ret == pytest.ExitCode.OK


def test_a_clean_matrix_passes_and_summarizes_the_verdicts(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*matrix("text-basic", "tool-call-parallel"), "-v", "--strict-markers")
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(
        [
            "conformance::text-basic[[]openai->anthropic,stream[]] PASSED*",
            "conformance::tool-call-parallel[[]openai->openai,nonstream[]] PASSED*",
            "conformance: 8 cases: 8 pass",
        ]
    )


def test_unsupported_cases_skip_with_the_missing_capability(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*matrix("json-object"), "-rs")
    result.assert_outcomes(passed=2, skipped=2)
    # The skip points at the scenario file and names the party that lacks the capability.
    result.stdout.fnmatch_lines(
        ["SKIPPED [[]2[]] *scenarios/json-object.yaml:1: declared unsupported: anthropic backend lacks json_object*"]
    )


def test_provider_markers_select_by_backend_and_frontend(pytester: pytest.Pytester) -> None:
    by_backend = pytester.runpytest(
        *matrix("text-basic"), "-m", "conformance_backend_anthropic", "--strict-markers", "--collect-only", "-q"
    )
    assert collected_ids(by_backend) == TEXT_BASIC_IDS[:2]
    by_stream = pytester.runpytest(
        *matrix("text-basic", frontends="openai,anthropic", backends="openai"),
        "-m",
        "conformance_frontend_anthropic and conformance_stream",
        "--collect-only",
        "-q",
    )
    assert collected_ids(by_stream) == ["conformance::text-basic[anthropic->openai,stream]"]


def test_markers_name_only_real_frontends(pytester: pytest.Pytester) -> None:
    """A backend-only profile (groq) gets a backend marker but no frontend marker: no case can have it as one."""
    result = pytester.runpytest(*matrix("text-basic"), "--markers")
    markers = [line.split(":")[0].removeprefix("@pytest.mark.") for line in result.outlines if "conformance_" in line]
    frontends = sorted(m.removeprefix("conformance_frontend_") for m in markers if "_frontend_" in m)
    assert frontends == sorted(default_frontends()) and "openai" in frontends
    assert "conformance_backend_groq" in markers and "conformance_backend_openai" in markers
    assert "conformance_frontend_groq" not in markers


def test_an_injected_request_side_proxy_bug_fails_with_the_first_divergence(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(DROP_TOOLS_CONFTEST)
    result = pytester.runpytest(*matrix("tool-call-parallel", backends="anthropic"), "--conformance-streaming=stream")
    result.assert_outcomes(failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*_ tool-call-parallel[[]openai->anthropic,stream[]] _*",
            "proxy_bug_request: upstream request differs from the client's request at request.tools*",
            "first divergence at request.tools*",
            '  client request:   *"name": "get_weather"*',
            "  upstream request: *",
            "runs: baseline_frontend ok; baseline_backend ok; translated *",
        ]
    )


def test_an_injected_response_side_proxy_bug_shows_both_texts(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(SHOUT_CONFTEST)
    result = pytester.runpytest(*matrix("text-basic", backends="anthropic"), "--conformance-streaming=stream")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "proxy_bug_response: translated run fails (text_equals)",
            "first divergence at *.text (stream event *",
            '  baseline:         "Hello! How can I help you today?"',
            '  translated:       "HELLO! HOW CAN I HELP YOU TODAY?"',
            "runs: *translated failed (text_equals)",
            "rerun this case: pytest *-m conformance --conformance *--conformance-scenario=text-basic "
            "--conformance-frontend=openai --conformance-backend=anthropic --conformance-streaming=stream",
            # The fault lives in the conftest's hook: `conformance run` would pass, so it is not offered.
            "(`conformance run` cannot apply this session's pytest_conformance_translate_hooks)",
        ]
    )


def _rerun_args(result: pytest.RunResult) -> list[str]:
    """The arguments of the first failure's `rerun this case: pytest ...` line."""
    line = next(line for line in result.outlines if line.startswith("rerun this case: pytest "))
    return shlex.split(line.removeprefix("rerun this case: "))[1:]


def test_the_rerun_command_reproduces_exactly_the_failing_case(pytester: pytest.Pytester) -> None:
    """The hint's pytest command, run as printed, runs that one case (no other test, no other case) and it fails
    the same way; the hint is the first failure's, in a session with other tests and a wider matrix."""
    pytester.makeconftest(SHOUT_CONFTEST)
    pytester.makepyfile(test_other="def test_unrelated():\n    pass\n")
    first = pytester.runpytest(
        *matrix("text-basic", "tool-call-single", backends="anthropic,openai"), "-p", "no:cacheprovider"
    )
    outcomes = first.parseoutcomes()
    assert outcomes["failed"] >= 2 and outcomes["passed"] >= 1  # other cases and the unrelated test ran
    failed = [line.split()[1] for line in first.outlines if line.startswith("FAILED conformance::")]
    again = pytester.runpytest(*_rerun_args(first), "-v", "-p", "no:cacheprovider")
    again.assert_outcomes(failed=1)
    assert [line.split()[1] for line in again.outlines if line.startswith("FAILED ")] == failed[:1]
    again.stdout.fnmatch_lines(["proxy_bug_response: translated run fails (text_equals)"])


def test_a_known_proxy_bug_is_an_expected_failure(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(DROP_TOOLS_CONFTEST)
    pytester.path.joinpath("conformance-known.toml").write_text(
        "[[case]]\n"
        'id = "tool-call-parallel[openai->anthropic,stream]"\n'
        'verdict = "proxy_bug_request"\n'
        'reason = "tools dropped; tracked in #7"\n',
        encoding="utf-8",
    )
    result = pytester.runpytest(*matrix("tool-call-parallel", backends="anthropic"), "-rx")
    # The listed case is accepted; its nonstream twin is a new bug and still fails.
    result.assert_outcomes(xfailed=1, failed=1)
    result.stdout.fnmatch_lines(["XFAIL *tool-call-parallel[[]openai->anthropic,stream[]]*tracked in #7*"])


def own_cassettes(options: list[str]) -> list[str]:
    """A matrix's options without its cassette folder (repeated, the folders are layers: the first one wins)."""
    return [o for o in options if not o.startswith("--conformance-cassettes=")]


def test_a_missing_cassette_fails_as_a_harness_error_never_a_skip(pytester: pytest.Pytester) -> None:
    cassettes = pytester.path / "cassettes"
    for backend in ("openai", "anthropic"):
        shutil.copytree(CASSETTES / backend, cassettes / backend)
    (cassettes / "anthropic" / "text-basic.stream.yaml").unlink()
    only = ("--conformance-no-packaged", f"--conformance-cassettes={cassettes}")  # the packaged ones have it
    result = pytester.runpytest(*own_cassettes(matrix("text-basic")), *only, "--conformance-streaming=stream", "-rf")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*harness_error: the translated run could not complete: missing cassette*", "*nothing was judged*"]
    )


def test_ini_options_apply_and_the_command_line_overrides_them(pytester: pytest.Pytester) -> None:
    local = pytester.mkdir("my-scenarios")
    shutil.copy(SCENARIOS / "text-basic.yaml", local / "text-basic.yaml")
    pytester.makeini(
        f"""
        [pytest]
        conformance = true
        conformance_scenarios = my-scenarios
        conformance_no_packaged = true
        conformance_cassettes = {CASSETTES}
        conformance_frontend = openai
        conformance_backend = openai
        conformance_streaming = nonstream
        """
    )
    # Run from a subfolder: the ini's relative scenario folder is taken relative to the ini file.
    sub = pytester.mkdir("sub")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(sub)
        from_ini = pytester.runpytest(*PLUGIN, "--collect-only", "-q")
        overridden = pytester.runpytest(*PLUGIN, "--conformance-backend=anthropic", "--collect-only", "-q")
    assert collected_ids(from_ini) == ["conformance::text-basic[openai->openai,nonstream]"]
    assert collected_ids(overridden) == ["conformance::text-basic[openai->anthropic,nonstream]"]


def test_a_wrong_setting_is_a_collection_error_naming_it(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*matrix("text-basic", backends="zzz"))
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["*ERROR collecting conformance*", "conformance: backend 'zzz': unknown protocol; backends: anthropic, *"]
    )
    result = pytester.runpytest(*matrix("text-basic", backends="antropic"))
    result.stdout.fnmatch_lines(["conformance: backend 'antropic': unknown protocol (did you mean 'anthropic'?); *"])
    result = pytester.runpytest(*matrix("text-basic", frontends="groq"))
    result.stdout.fnmatch_lines(
        [
            "conformance: frontend 'groq': a backend-only profile of openai (no proxy routes or SDK of its own; the "
            f"openai SDK drives it); frontends: {', '.join(default_frontends())}"
        ]
    )
    result = pytester.runpytest(*matrix("text-basi"))
    result.stdout.fnmatch_lines(["conformance: unknown scenario 'text-basi' (did you mean 'text-basic'?): not in *"])
    result = pytester.runpytest(*matrix("text-basic"), "--conformance-known=missing.toml")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["conformance: *missing.toml: no such known-failures file"])
    pytester.path.joinpath("conformance-known.toml").write_text('[[case]]\nid = "x"\n', encoding="utf-8")
    result = pytester.runpytest(*matrix("text-basic"))
    result.stdout.fnmatch_lines(
        [
            "conformance: *conformance-known.toml: case[[]0[]].verdict: missing or empty; each entry needs a string "
            "verdict"
        ]
    )
    pytester.makeini("[pytest]\nconformance_record_mode = sometimes\n")
    result = pytester.runpytest(*matrix("text-basic"))
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["conformance: conformance_record_mode = 'sometimes': choose one of none, once, new_episodes, all, rewrite"]
    )


def test_record_mode_once_records_a_missing_cassette_before_the_first_case(pytester: pytest.Pytester) -> None:
    cassettes = pytester.path / "cassettes"
    for backend in ("openai", "anthropic"):
        shutil.copytree(CASSETTES / backend, cassettes / backend)
    missing = cassettes / "anthropic" / "text-basic.stream.yaml"
    missing.unlink()
    only = ("--conformance-no-packaged", f"--conformance-cassettes={cassettes}")  # one folder to record into
    result = pytester.runpytest(*own_cassettes(matrix("text-basic")), *only, "--conformance-record-mode=once")
    result.assert_outcomes(passed=4)
    assert "source: reference" in missing.read_text(encoding="utf-8")


def test_socket_mode_serves_the_proxy_on_loopback(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*matrix("text-basic", backends="anthropic"), "--conformance-socket")
    result.assert_outcomes(passed=2)


def test_the_fixture_runs_a_case_by_id_without_collecting_items(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_fixture="""
        import pytest

        def test_case(conformance_case):
            result = conformance_case("text-basic[openai->anthropic,stream]")
            assert result.verdict == "pass"
            assert result.runs["translated"].upstream == "anthropic"
            with pytest.raises(LookupError, match="not a case of the configured matrix"):
                conformance_case("text-basic[openai->gemini,stream]")
        """
    )
    options = [o for o in matrix("text-basic", backends="anthropic") if o != "--conformance"]
    result = pytester.runpytest(*options, "-v")
    result.assert_outcomes(passed=1)
    assert "conformance::" not in result.stdout.str()


def test_traces_are_written_for_the_report(pytester: pytest.Pytester) -> None:
    out = pytester.path / "out"
    result = pytester.runpytest(*matrix("text-basic", backends="anthropic"), f"--conformance-report={out}")
    result.assert_outcomes(passed=2)
    assert sorted(p.name for p in (out / "cases").iterdir()) == [
        "text-basic__openai-to-anthropic_nonstream.json.gz",
        "text-basic__openai-to-anthropic_stream.json.gz",
    ]
    events = events_for_run(out)  # what `conformance report --run out` renders
    assert len(events) == 4  # MatrixStarted, two CaseFinished, MatrixFinished


def test_verdicts_reach_junit_as_properties(pytester: pytest.Pytester) -> None:
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest(*matrix("json-object", backends="anthropic"), f"--junitxml={xml}")
    result.assert_outcomes(skipped=2)
    text = xml.read_text(encoding="utf-8")
    assert 'name="verdict" value="unsupported"' in text
    assert 'classname="conformance"' in text and 'name="json-object[openai-&gt;anthropic,stream]"' in text


def test_items_run_in_matrix_order_under_a_selection_by_keyword(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*matrix("text-basic", "tool-call-parallel"), "-k", "nonstream and not anthropic", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "conformance::text-basic[[]openai->openai,nonstream[]] PASSED*",
            "conformance::tool-call-parallel[[]openai->openai,nonstream[]] PASSED*",
        ]
    )


def test_the_packaged_folders_are_the_default_and_a_teams_folder_adds_to_them(pytester: pytest.Pytester) -> None:
    (pytester.path / "scenarios").mkdir()  # a folder of that name at the rootdir is nothing special
    shutil.copy(SCENARIOS / "text-basic.yaml", pytester.path / "scenarios" / "my-own.yaml")
    args = [*PLUGIN, "--conformance", "--conformance-frontend=openai", "--collect-only", "-q"]
    packaged = collected_ids(pytester.runpytest(*args))
    assert len(packaged) > 100 and not any("my-own" in i for i in packaged)
    # A team's scenario (its id is its file name) joins them; its cassettes would come from its cassette folder.
    text = (SCENARIOS / "text-basic.yaml").read_text(encoding="utf-8").replace("id: text-basic", "id: my-own")
    (pytester.path / "scenarios" / "my-own.yaml").write_text(text, encoding="utf-8")
    both = collected_ids(pytester.runpytest(*args, "--conformance-scenarios=scenarios"))
    new = set(both) - set(packaged)
    assert new and {i.split("[")[0] for i in new} == {"conformance::my-own"}
    assert len(both) == len(packaged) + len(new)


def _outcomes(result: pytest.RunResult) -> dict[str, str]:
    """Outcome of each conformance item in a `-v` run (xdist prints `[gw0] PASSED <id>`, a serial run `<id> PASSED`)."""
    out = {}
    for line in result.outlines:
        words = line.replace("[gw0]", "").replace("[gw1]", "").split()
        ids = [w for w in words if w.startswith("conformance::")]
        states = [w for w in words if w in ("PASSED", "FAILED", "SKIPPED", "XFAIL", "ERROR")]
        if ids and states:
            out[ids[0]] = states[0]
    return out


@pytest.mark.parametrize("dist", ["load", "loadgroup"])
def test_under_xdist_every_case_comes_out_as_in_a_serial_run(pytester: pytest.Pytester, dist: str) -> None:
    pytester.makeconftest(DROP_TOOLS_CONFTEST)
    args = [*matrix("text-basic", "tool-call-parallel", backends="openai,anthropic,gemini"), "-v", "--strict-markers"]
    serial = pytester.runpytest_subprocess(*args, "-p", "no:xdist")
    parallel = pytester.runpytest_subprocess(*args, "-n", "2", "--dist", dist)
    assert _outcomes(serial) == _outcomes(parallel)
    assert len(_outcomes(serial)) == 2 * 3 * 2
    assert set(_outcomes(serial).values()) == {"PASSED", "FAILED"}  # the dropped tools are caught in both
    assert serial.ret == parallel.ret == pytest.ExitCode.TESTS_FAILED
