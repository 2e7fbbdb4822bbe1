"""Garbage, damaged real traffic and wrongly typed JSON into every decoder: only `WireError`s come out
(`DecodeError` and the framing layer's `FramingError`), and `decode_error` never raises at all."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.protocols import Codec
from harness.wire.http import HttpRequest
from tests.conftest import corpus_files
from tests.protocols.mutate import every_decoder
from tests.protocols.openai import support

# The base codec and every profile with decode hooks of its own (hooks read untrusted JSON too).
CODECS = [c for c in support.PROFILE_CODECS if c.name in {"openai", "deepseek", "groq", "mistral", "xai", "together",
                                                          "llamacpp", "azure"}]  # fmt: skip


@cache
def _bodies() -> list[bytes]:
    """Request and response bodies of every OpenAI and OpenAI-compatible corpus file."""
    out: list[bytes] = []
    for folder in ("openai_chat", "openai_compat"):
        for path in corpus_files(folder):
            for item in support.interactions(folder, path.name):
                out += [item.request.body, item.response.body]
    return out


@st.composite
def mutations(draw: st.DrawFn, body: bytes) -> bytes:
    """`body` with byte flips, a truncation, a deleted range or inserted bytes."""
    data = bytearray(body)
    how = draw(st.sampled_from(["flip", "truncate", "delete", "insert"]))
    if how == "flip" and data:
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= draw(st.integers(1, 255))
    elif how == "truncate":
        del data[draw(st.integers(0, len(data))) :]
    elif how == "delete":
        a = draw(st.integers(0, len(data)))
        del data[a : a + draw(st.integers(1, 64))]
    else:
        data[draw(st.integers(0, len(data))) : 0] = draw(st.binary(min_size=1, max_size=8))
    return bytes(data)


def _every_decoder(codec: Codec, body: bytes) -> None:
    every_decoder(codec, body, HttpRequest(method="POST", path="/openai/deployments/d/chat/completions", body=body))


@pytest.mark.corpus
@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@given(data=st.data())
def test_mutated_corpus_raises_only_wire_errors(codec: Codec, data: st.DataObject) -> None:
    bodies = _bodies()
    if not bodies:
        pytest.skip("corpus absent")
    _every_decoder(codec, data.draw(mutations(data.draw(st.sampled_from(bodies)))))


def test_decode_error_keeps_non_json_text_as_message() -> None:
    error = support.OPENAI.decode_error(502, {}, b"<html>Bad Gateway</html>\n")
    assert (error.kind, error.message, error.status) == ("server", "<html>Bad Gateway</html>", 502)
    error = support.OPENAI.decode_error(503, {}, b"\xff\xfe not utf-8")
    assert error.kind == "overloaded" and error.message.endswith("not utf-8")
