"""Converse `document` blocks <-> IR file parts.

A document is `{"format": <extension>, "name": <name>, "source": {"bytes": <base64>}}`. `format` is one of nine
extensions (the MIME types below); `name` is required and may hold only alphanumerics, single whitespace,
hyphens, parentheses and square brackets (1 to 200 characters), so a file name such as `report.pdf` is sent as
`report`, and a file part without a name as `document` (the `FilePart.filename` loss). Documents in S3, as text
or as content blocks have no IR form.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from harness import ir
from harness.protocols.bedrock.mapping import READ, fail

FORMATS: Mapping[str, str] = {
    "pdf": "application/pdf",
    "csv": "text/csv",
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "html": "text/html",
    "txt": "text/plain",
    "md": "text/markdown",
}
"""Converse's document formats and the MIME type of each."""

_FORMAT_OF = {media: fmt for fmt, media in FORMATS.items()}
DEFAULT_NAME = "document"
"""The name of a document whose file part has none (Converse requires one)."""
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9\s\-()\[\]]+")


def document_name(filename: str | None) -> str:
    """A name Converse accepts for a file name: its extension dropped (the format says it), other characters
    outside the allowed set as hyphens, whitespace runs as one space; `document` when nothing is left."""
    if filename is None:
        return DEFAULT_NAME
    stem = filename.rsplit(".", 1)[0] if "." in filename.lstrip(".") else filename
    name = " ".join(_NOT_ALLOWED.sub("-", stem).split())[:200].strip()
    return name or DEFAULT_NAME


def file_part(block: Mapping[str, Any], where: str) -> ir.FilePart | None:
    """The IR file part of a `document` block given as bytes; None for one in S3, as text or as content."""
    document = READ.need_obj(block, "document", where)
    here = f"{where}.document"
    source = READ.need_obj(document, "source", here)
    if "bytes" not in source:
        return None
    fmt = READ.need_str(document, "format", here)
    if fmt not in FORMATS:
        raise fail(f"{here}.format is {fmt!r}, expected one of {', '.join(FORMATS)}")
    return ir.FilePart(
        media_type=FORMATS[fmt],
        data=READ.need_str(source, "bytes", f"{here}.source"),
        filename=READ.need_str(document, "name", here),
    )


def document_block(part: ir.FilePart) -> dict[str, Any] | None:
    """The `document` block of a file part; None for a media type outside Converse's formats (not sent). Converse
    takes bytes (or S3) only: a file by URL or id is refused (no file_url or file_id capability)."""
    if part.data is None or part.media_type is None:
        raise ValueError(f"Converse has no document source for a file by {part.form}")
    fmt = _FORMAT_OF.get(part.media_type)
    if fmt is None:
        return None
    return {"document": {"format": fmt, "name": document_name(part.filename), "source": {"bytes": part.data}}}
