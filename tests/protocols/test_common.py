"""`harness.protocols.common`: the token estimate a frontend reports before its upstream has."""

from __future__ import annotations

import base64

from harness import ir
from harness.protocols.common import estimate_tokens


def _request(*parts: ir.ContentPart) -> ir.Request:
    return ir.Request(model="m", messages=[ir.Message(role="user", content=list(parts))])


def test_estimate_counts_a_file_by_its_bytes_and_an_image_as_85() -> None:
    text = ir.TextPart(text="abcd" * 10)  # 40 characters: 10 tokens
    file = ir.FilePart(media_type="application/pdf", data=base64.b64encode(b"%PDF-" + b"x" * 395).decode())
    image = ir.ImagePart(source=ir.Base64Image(media_type="image/png", data="iVBORw0K"))
    assert estimate_tokens(_request(text)) == 10
    assert estimate_tokens(_request(text, file)) == 10 + 100  # 400 bytes
    assert estimate_tokens(_request(text, image)) == 10 + 85
