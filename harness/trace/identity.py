"""The identity of a case and of a run: one frozen type each, that knows its derived forms.

A `Case` is (scenario, frontend, backend, streaming); a `Run` is one of its three runs. Everything the harness
derives from them (the case id, the run key the proxy's tap files an exchange under, the proxy route the SDK
names as its model, the cassette the backend answer replays from) is a property here, so no other part spells
one of these forms again. Both types are frozen, hashable, ordered and picklable: plain data that can cross
process boundaries and key a cache.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

RunRole = Literal["baseline_frontend", "baseline_backend", "translated"]
"""Which of a case's three runs."""
Mode = Literal["passthrough", "translate"]
"""How the proxy serves a run."""
MODES: tuple[Mode, ...] = ("passthrough", "translate")
"""Every proxy mode a route can have."""
Transport = Literal["http", "ws"]
"""How the client reaches the frontend: HTTP, or the frontend's WebSocket mode (always streamed)."""
TRANSPORTS: tuple[Transport, ...] = ("http", "ws")
"""Every transport, in matrix order."""

CASSETTE_SUFFIX = ".yaml"


def stream_mode(stream: bool) -> Literal["stream", "nonstream"]:
    """`stream` or `nonstream`: how scenario files, cassette names and case ids spell a streaming flag."""
    return "stream" if stream else "nonstream"


def route_name(scenario: str, backend: str, mode: Mode) -> str:
    """The model name an SDK sends for one (scenario, backend, mode) route of the proxy under test."""
    return f"{scenario}--{backend}--{mode}"


@dataclass(frozen=True, order=True)
class Recording:
    """One backend answer on disk: `<root>/<backend>/<scenario>.<stream|nonstream>.yaml`.

    The backend's answer to a scenario does not depend on which frontend asked, so baseline(B) and every
    translated run into B replay the same recording."""

    backend: str
    """Backend protocol or profile (the cassette folder)."""
    scenario: str
    """Scenario id."""
    stream: bool
    """Streaming mode."""

    @property
    def file_name(self) -> str:
        """The cassette's file name inside its backend folder."""
        return f"{self.scenario}.{stream_mode(self.stream)}{CASSETTE_SUFFIX}"

    @property
    def relative_path(self) -> str:
        """The cassette path relative to the cassette root (as traces record it)."""
        return f"{self.backend}/{self.file_name}"

    def path(self, root: Path) -> Path:
        """The cassette path under `root`."""
        return root / self.backend / self.file_name

    @classmethod
    def from_path(cls, path: Path) -> Recording | None:
        """The recording a cassette path names; None for a file that is not a cassette."""
        scenario, _, mode = path.name.removesuffix(CASSETTE_SUFFIX).rpartition(".")
        if not path.name.endswith(CASSETTE_SUFFIX) or mode not in ("stream", "nonstream") or not scenario:
            return None
        return cls(path.parent.name, scenario, mode == "stream")


@dataclass(frozen=True, order=True)
class Run:
    """One run: an SDK client sends a scenario through the proxy to a backend, in one mode."""

    role: RunRole
    """Which of the three runs of a case it is (the translated run translates; baselines pass through)."""
    client: str
    """Protocol whose SDK sends the request."""
    backend: str
    """Backend protocol or profile the proxy talks to."""
    scenario: str
    """Scenario id."""
    stream: bool
    """Whether the run streams."""
    transport: Transport = "http"
    """How the SDK reaches the proxy (`ws`: the frontend's WebSocket mode)."""

    @property
    def mode(self) -> Mode:
        """How the proxy serves it: the translated run translates, baselines pass through."""
        return "translate" if self.role == "translated" else "passthrough"

    @property
    def key(self) -> str:
        """The run key: the proxy's trace tap files the run's exchange under it (sent in a request header)."""
        ws = ":ws" if self.transport == "ws" else ""
        return f"{self.role}:{self.client}:{self.backend}:{self.scenario}:{'s' if self.stream else 'n'}{ws}"

    @property
    def route(self) -> str:
        """The proxy route the SDK names as its model."""
        return route_name(self.scenario, self.backend, self.mode)

    @property
    def recording(self) -> Recording:
        """The backend answer it replays."""
        return Recording(self.backend, self.scenario, self.stream)

    def cassette(self, root: Path) -> Path:
        """Where its recording lives under the cassette root `root`."""
        return self.recording.path(root)


@dataclass(frozen=True, order=True)
class Case:
    """One (scenario, frontend, backend, streaming) combination of the matrix."""

    scenario: str
    """Scenario id."""
    frontend: str
    """Frontend protocol: the SDK client and the proxy route it speaks."""
    backend: str
    """Backend protocol or profile the proxy translates to."""
    stream: bool
    """Whether the case streams."""
    transport: Transport = "http"
    """How the frontend's SDK reaches the proxy; `ws` cases exist for frontends with a WebSocket mode, streamed."""

    @property
    def case_id(self) -> str:
        """Stable id, e.g. `tool-call-parallel[anthropic->openai,stream]` (`...,stream,ws]` over WebSocket)."""
        ws = ",ws" if self.transport == "ws" else ""
        return f"{self.scenario}[{self.frontend}->{self.backend},{stream_mode(self.stream)}{ws}]"

    def runs(self, backend_family: str) -> dict[RunRole, Run]:
        """Its three runs by role; `backend_family` is the protocol whose SDK drives the backend's baseline.
        Baselines are shared by every case that needs the same one; the backend's is always over HTTP."""
        t = self.transport
        return {
            "baseline_frontend": Run("baseline_frontend", self.frontend, self.frontend, self.scenario, self.stream, t),
            "baseline_backend": Run("baseline_backend", backend_family, self.backend, self.scenario, self.stream),
            "translated": Run("translated", self.frontend, self.backend, self.scenario, self.stream, t),
        }


def matrix_order(scenarios: Sequence[str]) -> Callable[[Case], tuple[int, str, str, bool, bool]]:
    """The sort key of the matrix's cases: by scenario (in the order given), frontend, backend, streaming (stream
    first), transport (HTTP first). Planning sorts by it, and so does joining shards back into one report."""
    rank = {scenario: i for i, scenario in enumerate(scenarios)}
    return lambda case: (
        rank.get(case.scenario, len(rank)),
        case.frontend,
        case.backend,
        not case.stream,
        case.transport != "http",
    )
