"""Configs for a gateway under test (`conformance sut-config`): every translate route of the matrix pointed at the
replay server, in the gateway's own format. How each gateway names a protocol is one of that protocol's facts
(`harness/gateways/names.py`: the gateways' own knowledge, not the protocols')."""

from harness.gateways.configs import FORMATS, render, request_path, scenario_table

__all__ = ["FORMATS", "render", "request_path", "scenario_table"]
