"""Running one case with a catalogued fault switched on, for the tests of the checks that catch it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.checks import spec, subject, wire
from harness.checks.memo import ANSWERS, Memo
from harness.faults import by_name
from harness.runner.engine import Engine
from harness.runner.plan import MatrixOptions
from harness.trace.model import CaseResult
from tests.conftest import REPO


def run_fault(
    tmp_path: Path,
    fault: str | None,
    scenario: str,
    *,
    frontend: str = "openai",
    backend: str = "anthropic",
    stream: bool,
) -> tuple[int, CaseResult]:
    """The exit code and the one case of `scenario[frontend->backend]` run with `fault`'s hooks (None: the clean
    proxy)."""
    options = MatrixOptions(
        scenarios=REPO / "scenarios",
        cassettes=REPO / "cassettes",
        reports=tmp_path,
        frontends=[frontend],
        backends=[backend],
        only=[scenario],
        streams=(stream,),
        known=tmp_path / "known.toml",
        run_id="fault",
        hooks=by_name(fault).hooks if fault else None,
    )
    engine = Engine(options)
    code = engine.run().exit_code
    (result,) = engine.results
    return code, result


def forget_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty memos of the checks of the answer alone and of the decoded streams, for a test that counts the work
    an answer takes (an earlier test may have judged the same bytes)."""
    for module, name in ((spec, "_answers"), (wire, "_checked"), (wire, "_broken")):
        monkeypatch.setattr(module, name, Memo(ANSWERS))
    monkeypatch.setattr(subject, "_decoded", Memo(subject.STREAM_MEMO))
