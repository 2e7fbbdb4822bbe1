"""`sut-config --format` takes every gateway module's format, read only when argparse needs it: building the parser,
which every command does, imports no gateway."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.cli import build_parser
from harness.gateways.configs import FORMATS
from tests.conftest import REPO


def test_building_the_parser_imports_no_gateway() -> None:
    code = "import sys; from harness.cli import build_parser; build_parser(); print('harness.gateways' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


def test_every_gateway_format_and_json_are_taken_and_nothing_else(capsys: pytest.CaptureFixture[str]) -> None:
    assert "open-responses-server" in FORMATS
    for name in (*FORMATS, "json"):
        assert build_parser().parse_args(["sut-config", "--format", name]).format == name
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["sut-config", "--format", "nope"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nope'" in err and "'open-responses-server', 'json'" in err
