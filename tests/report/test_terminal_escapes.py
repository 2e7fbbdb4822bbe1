"""Raw terminal escape sequences from answers never reach the terminal (issue 22): the terminal writer shows each
control character of answer text (reasons, divergent values, deviation messages) as its escape."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from harness.report.terminal import printable


def test_raw_escape_sequences_from_answers_never_reach_the_terminal() -> None:
    answer = "clear\x1b[2J\x1b]0;pwned\x07 csi\x9b31m cr\r end"
    shown = printable(answer)
    assert shown == "clear\\x1b[2J\\x1b]0;pwned\\x07 csi\\x9b31m cr\\x0d end"
    out = io.StringIO()
    Console(file=out, force_terminal=False, width=200).print(Text(shown))
    assert not any(ch in out.getvalue() for ch in "\x1b\x07\x9b\r")


def test_newlines_tabs_and_text_are_kept() -> None:
    assert printable("a\tb\nc é 中") == "a\tb\nc é 中"
