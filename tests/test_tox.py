"""tox.ini agrees with the noxfile: a conformance gate per folder of cassettes/ and a gate per folder of
gateways/, each in its label, and `tox l` lists them (tox.ini says why they are written out, not generated)."""

from __future__ import annotations

import configparser
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def _folders(name: str) -> set[str]:
    return {p.name for p in (REPO / name).iterdir() if p.is_dir()}


def _tox() -> configparser.ConfigParser:
    config = configparser.ConfigParser(interpolation=None)
    config.read(REPO / "tox.ini", encoding="utf-8")
    return config


def _envs(config: configparser.ConfigParser, prefix: str) -> set[str]:
    return {s.removeprefix(f"testenv:{prefix}-") for s in config.sections() if s.startswith(f"testenv:{prefix}-")}


def _label(config: configparser.ConfigParser, name: str, prefix: str) -> set[str]:
    for line in config["tox"]["labels"].strip().splitlines():
        label, _, envs = line.partition("=")
        if label.strip() == name:
            return {e.strip().removeprefix(f"{prefix}-") for e in envs.split(",")}
    raise AssertionError(f"tox.ini has no label {name}")


def test_every_backend_and_gateway_has_its_tox_environment_and_label() -> None:
    config = _tox()
    assert _envs(config, "conformance") == _label(config, "conformance", "conformance") == _folders("cassettes")
    assert _envs(config, "gateway") == _label(config, "gateways", "gateway") == _folders("gateways")
    for backend in _folders("cassettes"):
        section = config[f"testenv:conformance-{backend}"]
        assert (section["base"], section["set_env"].strip()) == ("conformance", f"BACKEND = {backend}")
    for gateway in _folders("gateways"):
        section = config[f"testenv:gateway-{gateway}"]
        home = REPO / "gateways" / gateway
        assert section["set_env"].strip() == f"GATEWAY = {gateway}"
        assert ("deps" in section) == (home / "requirements.txt").is_file()
        assert ("commands_pre" in section) == (home / "package.json").is_file()


def test_tox_lists_the_same_gates_as_nox() -> None:
    sys.path.insert(0, str(REPO))
    try:
        import noxfile
    finally:
        sys.path.remove(str(REPO))
    tox = Path(sys.executable).with_name("tox")
    listed = subprocess.run([str(tox), "l"], cwd=REPO, capture_output=True, text=True, timeout=120, check=True).stdout
    names = {line.split()[0] for line in listed.splitlines() if line.startswith(("conformance-", "gateway-"))}
    assert names == {f"conformance-{b}" for b in noxfile.BACKENDS} | {f"gateway-{g}" for g in noxfile.GATEWAYS}
