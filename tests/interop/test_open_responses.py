"""The OpenResponses suite's driver (`harness.interop.open_responses`) without the suite: the checkout from the
environment, the runtime cache, the proxy before each reference backend, running and reading a suite process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx2
import pytest

from harness.backends.generic import GENERIC_TEXT
from harness.interop import open_responses as driver


def test_an_unset_checkout_variable_is_a_one_line_error() -> None:
    with pytest.raises(driver.SuiteError, match=r"^OPENRESPONSES_DIR is not set: ") as caught:
        driver.suite_dir({})
    assert "\n" not in str(caught.value)


def test_a_checkout_without_the_suite_file_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(driver.SuiteError, match=r"has no bin/compliance-test.ts"):
        driver.suite_dir({driver.SUITE_ENV: str(tmp_path)})
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "compliance-test.ts").write_text("", encoding="utf-8")
    assert driver.suite_dir({driver.SUITE_ENV: str(tmp_path)}) == tmp_path.resolve()


def test_main_exits_2_with_one_line_when_the_checkout_is_not_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(driver.SUITE_ENV, raising=False)
    assert driver.main(["--backend", "openai"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("openresponses: OPENRESPONSES_DIR is not set")


def test_main_refuses_an_unknown_backend(capsys: pytest.CaptureFixture[str]) -> None:
    assert driver.main(["--backend", "nope"]) == 2
    assert "unknown backend 'nope'" in capsys.readouterr().err


def test_the_runtime_is_pinned_exactly() -> None:
    pins = json.loads((driver.PINS / "package.json").read_text(encoding="utf-8"))["dependencies"]
    lock = json.loads((driver.PINS / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    assert set(pins) == {"tsx", "zod"}
    for name, version in pins.items():
        assert version[0].isdigit(), f"{name} is not pinned exactly"
        assert lock[f"node_modules/{name}"]["version"] == version


def test_a_cache_holding_the_same_lock_is_used_without_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "package-lock.json").write_bytes((driver.PINS / "package-lock.json").read_bytes())
    monkeypatch.setattr(driver.shutil, "which", lambda name: None)  # npm would be needed for anything else
    assert driver.install_runtime(tmp_path) == tmp_path / "node_modules"
    (tmp_path / "package-lock.json").write_text("{}", encoding="utf-8")
    with pytest.raises(driver.SuiteError, match="npm is not on PATH"):
        driver.install_runtime(tmp_path)


def test_the_cache_defaults_outside_the_project(tmp_path: Path) -> None:
    assert driver.cache_dir({driver.CACHE_ENV: str(tmp_path)}) == tmp_path
    assert driver.cache_dir({}) == Path.home() / ".cache" / "conformance" / "openresponses"


@pytest.mark.parametrize("backend", ["openai", "anthropic", "gemini"])
def test_the_proxy_before_each_reference_backend_answers_the_generic_reply(backend: str) -> None:
    body = {"model": driver.MODEL, "input": "Say hello in exactly 3 words."}
    with driver.serving(backend) as url, httpx2.Client(timeout=30) as client:
        answer = client.post(f"{url}/v1/responses", json=body)
        streamed = client.post(f"{url}/v1/responses", json={**body, "stream": True})
    assert answer.status_code == 200, answer.text
    [message] = answer.json()["output"]
    assert message["content"][0]["text"] == f'{GENERIC_TEXT} "Say hello in exactly 3 words."'
    assert streamed.status_code == 200
    assert '"type":"response.completed"' in streamed.text.replace(" ", "")


def _printing(out: object) -> list[str]:
    return [sys.executable, "-c", f"import json; print(json.dumps({out!r}))"]


def test_the_suites_json_is_read_into_counts_and_failures(tmp_path: Path) -> None:
    out = {
        "summary": {"passed": 1, "failed": 1, "skipped": 0, "total": 2},
        "results": [
            {"id": "basic-response", "status": "passed", "errors": []},
            {"id": "compact-response", "status": "failed", "errors": ["HTTP 404: Not Found"]},
        ],
    }
    result = driver.result_of("openai", driver.run_suite(_printing(out), tmp_path, tmp_path))
    assert (result.passed, result.failed, result.total) == (1, 1, 2)
    assert result.failures == {"compact-response": ["HTTP 404: Not Found"]}


def test_a_long_json_summary_is_read_whole_though_the_suite_exits_at_once(tmp_path: Path) -> None:
    # node's process.exit() drops what a pipe has not taken yet: the suite's JSON past 64 KiB (many failures, as
    # before a real gateway) was cut. The child here writes the way node does (non-blocking, then exits at once).
    out = {
        "summary": {"passed": 0, "failed": 1, "skipped": 0, "total": 1},
        "results": [{"id": "basic-response", "status": "failed", "errors": ["x" * 300_000]}],
    }
    script = (
        "import os, sys\n"
        "data = sys.stdin.buffer.read()\n"
        "os.set_blocking(1, False)\n"
        "try:\n"
        "    os.write(1, data)\n"
        "except BlockingIOError:\n"
        "    pass\n"
        "os._exit(1)\n"
    )
    source = tmp_path / "out.json"
    source.write_text(json.dumps(out), encoding="utf-8")
    command = ["sh", "-c", f"{sys.executable} -c {_quote(script)} < {_quote(str(source))}"]
    result = driver.result_of("openai", driver.run_suite(command, tmp_path, tmp_path))
    assert result.failures == {"basic-response": ["x" * 300_000]}


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def test_a_suite_printing_no_json_is_an_error(tmp_path: Path) -> None:
    command = [sys.executable, "-c", "import sys; print('Fatal error'); sys.exit(1)"]
    with pytest.raises(driver.SuiteError, match=r"printed no JSON summary \(exit 1\)"):
        driver.run_suite(command, tmp_path, tmp_path)


def test_a_suite_that_hangs_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    command = [
        sys.executable,
        "-c",
        f"import os, time; open({str(marker)!r}, 'w').write(str(os.getpid())); time.sleep(60)",
    ]
    with pytest.raises(driver.SuiteError, match="did not finish within 2 s"):
        driver.run_suite(command, tmp_path, tmp_path, timeout=2)
    pid = int(marker.read_text(encoding="utf-8"))
    assert (
        not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").lower()
    )
