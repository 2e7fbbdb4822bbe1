"""Developer sessions: tests, lint, typecheck, bench. One shared body per kind of session."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests", "lint", "typecheck"]
PYTHON = "3.11"


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


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict over harness/."""
    session.install("-e", ".[dev]")
    session.run("mypy")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks, each printed as a ratio to a reference measured in the same run."""
    session.install("-e", ".[dev]")
    session.run("python", "-m", "bench", *session.posargs)
