"""Developer sessions (tests, lint, typecheck, bench), the conformance gate per backend provider
(`nox -s conformance-openai`, ...; all of them: `nox -t conformance`), the gate of each real gateway
(`nox -s gateway-litellm`, `gateway-portkey`, `gateway-ccr`; all: `nox -t gateways`) and reference recording
(`nox -s record`).

One shared body per kind of session, parametrized per target as urllib3's noxfile does. The backends are the
folders of `cassettes/`, read here without importing the harness, so `nox -l` works before anything is installed.
"""

from __future__ import annotations

from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests", "lint", "typecheck"]
PYTHON = "3.11"
ROOT = Path(__file__).resolve().parent
BACKENDS = sorted(p.name for p in (ROOT / "cassettes").iterdir() if p.is_dir()) if (ROOT / "cassettes").is_dir() else []
"""Backend providers with recordings: one `conformance-<backend>` session each."""
GATEWAYS = sorted(p.name for p in (ROOT / "gateways").iterdir() if p.is_dir()) if (ROOT / "gateways").is_dir() else []
"""Real gateways, each pinned in its folder (`requirements.txt` for pip, `package.json` + lock for npm)."""


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the test suite (pass pytest arguments after --)."""
    session.install("-e", ".[dev]")
    session.run("python", "-m", "pytest", "-n", "2", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff over the code."""
    session.install("ruff>=0.8")
    session.run("ruff", "check", "harness", "tests", "bench", "noxfile.py")
    session.run("ruff", "format", "--check", "harness", "tests", "bench", "noxfile.py")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict over harness/ and bench/ (pyproject.toml's `files`)."""
    session.install("-e", ".[dev]")
    session.run("mypy")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks, each printed as a ratio to a reference measured in the same run."""
    session.install("-e", ".[dev]")
    session.run("python", "-m", "bench", *session.posargs)


@nox.session(python=PYTHON)
def record(session: nox.Session) -> None:
    """Re-record every cassette from the reference backends (no keys); arguments after -- go to `conformance record`
    (e.g. `-- --backend openai --source real` to record from the real provider with OPENAI_API_KEY)."""
    session.install("-e", ".")
    args = session.posargs or ["--backend", "all"]
    session.run("conformance", "record", *args)


def _conformance(session: nox.Session, backend: str) -> None:
    """The gate for one backend: every frontend SDK through the built-in proxy into `backend`'s cassettes. The
    report lands in reports/nox-<backend>/ (index.html, junit.xml, summary.json); the exit code is the gate."""
    session.install("-e", ".")
    session.run("conformance", "run", "--backend", backend, "--run-id", f"nox-{backend}", *session.posargs)


def _conformance_session(backend: str) -> None:
    def conformance(session: nox.Session) -> None:
        _conformance(session, backend)

    conformance.__doc__ = f"Conformance gate with {backend} as the backend (report: reports/nox-{backend}/)."
    nox.session(name=f"conformance-{backend}", python=PYTHON, tags=["conformance"])(conformance)


for _backend in BACKENDS:
    _conformance_session(_backend)


def _gateway(session: nox.Session, name: str) -> None:
    """Install the pinned gateway into this session's own environment (pip) or its folder (npm ci), then gate it:
    `conformance gateway` starts it on 127.0.0.1, waits until it is ready, runs every frontend it serves against
    every upstream it names, stops it by PID and keeps the report in reports/gateway-<name>/ (with its config and
    log). Arguments after -- go to `conformance gateway` (e.g. `-- --scenario text-basic` for a short run)."""
    home = ROOT / "gateways" / name
    session.install("-e", ".")
    if (home / "requirements.txt").is_file():
        session.install("-r", str(home / "requirements.txt"))
    if (home / "package.json").is_file():
        with session.chdir(home):
            session.run("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error", external=True)
    session.run("conformance", "gateway", name, "--home", str(home), "--run-id", f"gateway-{name}", *session.posargs)


def _gateway_session(name: str) -> None:
    def gateway(session: nox.Session) -> None:
        _gateway(session, name)

    gateway.__doc__ = f"Gate the real {name} gateway, pinned in gateways/{name}/ (report: reports/gateway-{name}/)."
    nox.session(name=f"gateway-{name}", python=PYTHON, tags=["gateways"])(gateway)


for _gateway_name in GATEWAYS:
    _gateway_session(_gateway_name)


@nox.session(name="open-responses", python=PYTHON)
def open_responses(session: nox.Session) -> None:
    """The OpenResponses compliance suite (`bin/compliance-test.ts` of a checkout named by OPENRESPONSES_DIR) against
    the built-in proxy's /v1/responses before each reference backend (default: OpenAI Chat, Anthropic, Gemini;
    or the backends given after --). Needs node 20+ and npm; its pinned runtime goes to OPENRESPONSES_CACHE
    (default ~/.cache/conformance/openresponses). docs/responses.md says more."""
    session.install("-e", ".")
    backends = session.posargs or ["openai", "anthropic", "gemini"]
    session.run("python", "-m", "harness.interop.open_responses", *[a for b in backends for a in ("--backend", b)])
