"""An imported case's file parts by URL or by stored id need the capability of that form, so the planner calls a
case before a backend without it unsupported, never a proxy bug."""

from __future__ import annotations

import pytest

from harness import ir
from harness.importer.scenario import requirements
from harness.ir import Capability
from harness.scenarios.model import Expectations, ReplyOk


@pytest.mark.parametrize(
    ("part", "needs"),
    [
        (ir.FilePart(media_type="application/pdf", data="JVBERi0="), {Capability.FILES}),
        (ir.FilePart(url="https://example.com/a.pdf"), {Capability.FILES, Capability.FILE_URL}),
        (ir.FilePart(file_id="file-abc"), {Capability.FILES, Capability.FILE_ID}),
    ],
)
def test_a_file_part_needs_the_capability_of_its_form(part: ir.FilePart, needs: set[Capability]) -> None:
    request = ir.Request(model="m", messages=[ir.Message(role="user", content=[ir.TextPart(text="Sum"), part])])
    reply = ReplyOk(content=[ir.TextPart(text="ok")])
    assert set(requirements(request, reply, Expectations())) == needs
