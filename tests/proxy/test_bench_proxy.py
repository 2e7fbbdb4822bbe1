"""A tiny run of bench/bench_proxy.py's whole main path, so the benchmark cannot rot unnoticed. No timing
assertions: one small run on a shared machine proves the rows exist, not the figures."""

from __future__ import annotations

import pytest

from bench import bench_proxy

pytestmark = pytest.mark.anyio


async def test_bench_proxy_prints_every_figure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench_proxy, "CHUNKS", 200)
    monkeypatch.setattr(bench_proxy, "MEGABYTES", 1)
    monkeypatch.setattr(bench_proxy, "TTFB_RUNS", 2)
    await bench_proxy.run()
    out = capsys.readouterr().out
    assert "translate / passthrough per chunk:" in out
    for mode in ("direct", "passthrough", "translate"):
        assert f"  {mode} " in out
    assert out.count("x direct)") == 3
    assert "passthrough +tap" in out and "translate +tap" in out
