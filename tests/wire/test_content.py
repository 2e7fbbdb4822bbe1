"""A capture's content encoding is undone with a bounded cost and one-line errors (issues 22 and 25)."""

from __future__ import annotations

import base64
import gzip
import zlib
from pathlib import Path

import pytest

from harness.capture import CaptureError, load_interactions
from harness.wire.content import InflateError, decode_content, decode_content_noted, inflate


def _capture(tmp_path: Path, encoding: str, body: bytes) -> Path:

    path = tmp_path / "capture.yaml"
    path.write_text(
        "interactions:\n- request: {method: POST, uri: 'https://x/v1', body: '{}'}\n"
        f"  response:\n    status: {{code: 200}}\n    headers: {{Content-Encoding: [{encoding}]}}\n"
        f"    body: {{base64: '{base64.b64encode(body).decode()}'}}\n"
    )
    return path


def test_gzip_bomb_in_a_capture_is_refused_at_the_limit() -> None:
    bomb = gzip.compress(b"\0" * (4 * 1024 * 1024))  # 4 KiB that inflate to 4 MiB: the limit is scaled down
    with pytest.raises(InflateError, match="inflates beyond 1048576 bytes"):
        inflate(bomb, 16 + zlib.MAX_WBITS, "gzip", limit=1024 * 1024)
    assert len(inflate(bomb, 16 + zlib.MAX_WBITS, "gzip", limit=8 * 1024 * 1024)) == 4 * 1024 * 1024


def test_deflate_bomb_is_refused_at_the_limit() -> None:
    with pytest.raises(InflateError, match="beyond 1000 bytes"):
        inflate(zlib.compress(b"a" * 5000), zlib.MAX_WBITS, "deflate", limit=1000)


def test_gzip_members_one_after_another_all_inflate() -> None:
    assert decode_content(gzip.compress(b"ab") + gzip.compress(b"cd"), {"content-encoding": "gzip"}) == b"abcd"


def test_bad_deflate_body_is_a_one_line_capture_error(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match=r"interaction 0: .*says deflate but does not inflate"):
        load_interactions(_capture(tmp_path, "deflate", b"\x78\x9c not deflate at all"))


def test_raw_and_zlib_deflate_both_inflate(tmp_path: Path) -> None:
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    raw_body = raw.compress(b'{"ok": 1}') + raw.flush()
    assert load_interactions(_capture(tmp_path, "deflate", raw_body))[0].response.body == b'{"ok": 1}'
    assert load_interactions(_capture(tmp_path, "deflate", zlib.compress(b'{"ok": 2}')))[0].response.body == (
        b'{"ok": 2}'
    )


def test_body_already_decoded_but_content_encoding_gzip_is_taken_as_stored(tmp_path: Path) -> None:
    # Quirk (issue 25): some recorders store the decoded body and keep `Content-Encoding: gzip`; the interaction
    # says so in a note, so that `decode` and `import` tell the user.
    stream = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    [item] = load_interactions(_capture(tmp_path, "gzip", stream))
    assert item.response.body == stream
    assert len(item.notes) == 1 and "Content-Encoding gzip but it has no gzip header" in item.notes[0]
    assert load_interactions(_capture(tmp_path, "gzip", b'{"id": "x"}'))[0].response.body == b'{"id": "x"}'
    [deflated] = load_interactions(_capture(tmp_path, "deflate", b'{"id": "x"}'))
    assert deflated.response.body == b'{"id": "x"}' and "Content-Encoding deflate" in deflated.notes[0]
    # A body that really is gzip needs no note.
    assert load_interactions(_capture(tmp_path, "gzip", gzip.compress(b'{"id": "x"}')))[0].notes == ()
    assert decode_content_noted(b"[1]", {}) == (b"[1]", None)


def test_gzip_magic_that_does_not_inflate_stays_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match=r"interaction 0: .*says gzip but does not inflate") as caught:
        load_interactions(_capture(tmp_path, "gzip", b"\x1f\x8b\x08\x00 corrupt body"))
    assert "\n" not in str(caught.value)


def test_truncated_gzip_is_a_one_line_capture_error(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="cut short"):
        load_interactions(_capture(tmp_path, "gzip", gzip.compress(b"x" * 1000)[:20]))
