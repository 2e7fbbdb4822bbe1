"""Config loading: a valid file, every kind of mistake named by file and key, and programmatic configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.proxy import ConfigError, ModelRoute, ProxyConfig, TranslateHooks, UpstreamConfig, create_app, load_config

VALID = """
[server]
port = 9000
max_request_bytes = 1000

[upstreams.oa]
protocol = "openai"
base_url = "https://api.openai.com/"
api_key_env = "OPENAI_API_KEY"
read_timeout = 30

[models."claude-sonnet-4-0"]
mode = "translate"
upstream = "oa"
upstream_model = "gpt-4o-mini"

[models."gpt-4o-mini"]
mode = "passthrough"
upstream = "oa"

[models.local-llama]
mode = "translate"
protocol = "ollama"
base_url = "http://127.0.0.1:11434"
hooks = "identity"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "proxy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_valid_config_loads_with_defaults_and_inline_upstreams(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, VALID))
    assert [m.name for m in config.models] == ["claude-sonnet-4-0", "gpt-4o-mini", "local-llama"]
    claude = config.route("claude-sonnet-4-0")
    assert claude is not None
    assert (claude.mode, claude.upstream_model, claude.upstream.protocol) == ("translate", "gpt-4o-mini", "openai")
    assert claude.upstream.base_url == "https://api.openai.com"  # trailing slash dropped
    assert (claude.upstream.read_timeout, claude.upstream.connect_timeout) == (30.0, 10.0)
    gpt = config.route("models/gpt-4o-mini")  # a Gemini-style prefix finds the same entry
    assert gpt is not None and gpt.upstream_model == "gpt-4o-mini" and gpt.mode == "passthrough"
    llama = config.route("local-llama")
    assert llama is not None
    assert (llama.upstream.name, llama.upstream.api_key_env, llama.hooks) == ("model:local-llama", None, "identity")
    assert [u.name for u in config.upstreams] == ["oa", "model:local-llama"]
    assert (config.host, config.port, config.max_request_bytes, config.source) == (
        "127.0.0.1",
        9000,
        1000,
        str(tmp_path / "proxy.toml"),
    )
    assert config.route("unknown") is None
    assert all(m.listed for m in config.models)  # listed unless the config says otherwise


def test_a_model_can_be_left_out_of_the_listings(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, VALID.replace('hooks = "identity"', 'hooks = "identity"\nlisted = false')))
    assert [(m.name, m.listed) for m in config.models] == [
        ("claude-sonnet-4-0", True),
        ("gpt-4o-mini", True),
        ("local-llama", False),
    ]


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        ("[models.m]\nmode = 'sideways'\nupstream = 'x'\n", "models.m.mode", "expected one of passthrough, translate"),
        ("[models.m]\nmode = 'translate'\nupstream = 'nope'\n", "models.m.upstream", "no upstream named 'nope'"),
        ("[models.m]\nmode = 'translate'\nprotocol = 'openai'\n", "models.m.base_url", "missing"),
        (
            "[models.m]\nmode = 'translate'\nprotocol = 'openai'\nbase_url = 'ftp://x'\n",
            "models.m.base_url",
            "expected an http(s) URL",
        ),
        (
            "[models.m]\nmode = 'translate'\nprotocol = 'openai'\nbase_url = 'http://x'\ncolour = 1\n",
            "models.m.colour",
            "unknown key",
        ),
        ("[models.m]\nupstream = 'x'\n", "models.m.mode", "missing"),
        (
            "[server]\nport = 'eighty'\n[models.m]\nmode='translate'\nprotocol='openai'\nbase_url='http://x'\n",
            "server.port",
            "expected an integer",
        ),
        (
            "[server]\nport = 70000\n[models.m]\nmode='translate'\nprotocol='openai'\nbase_url='http://x'\n",
            "server.port",
            "out of range",
        ),
        (
            "[upstreams.u]\nprotocol='openai'\nbase_url='http://x'\nread_timeout=-1\n[models.m]\nmode='translate'\nupstream='u'\n",
            "upstreams.u.read_timeout",
            "positive number of seconds",
        ),
        (
            "[upstreams.u]\nprotocol='openai'\nbase_url='http://x'\n[models.m]\nmode='translate'\nupstream='u'\nprotocol='x'\n",
            "models.m",
            "either 'upstream' or inline",
        ),
        ("[upstreams.u]\nprotocol='openai'\nbase_url='http://x'\n", "models", "missing table"),
        ("models = 3\n", "models", "expected a table"),
        ("[models]\n", "models", "at least one model"),
        (
            "[models.m]\nmode='translate'\nprotocol='openai'\nbase_url='http://x'\nlisted='no'\n",
            "models.m.listed",
            "expected true or false, got 'no'",
        ),
        ("[extra]\n[models.m]\nmode='translate'\nprotocol='openai'\nbase_url='http://x'\n", "extra", "unknown key"),
    ],
)
def test_each_mistake_is_named_by_file_and_key(tmp_path: Path, text: str, key: str, problem: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {key}: "), message
    assert problem in message


def test_unreadable_and_invalid_toml_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.toml: cannot read"):
        load_config(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match=r"proxy\.toml: not valid TOML"):
        load_config(write(tmp_path, "[models\n"))


def test_programmatic_config_rejects_duplicate_models_and_unknown_hooks() -> None:
    upstream = UpstreamConfig(name="u", protocol="anthropic", base_url="http://x")
    route = ModelRoute(name="m", mode="translate", upstream=upstream, upstream_model="m", hooks="chaos")
    with pytest.raises(ConfigError, match=r"<code>: models\.m: defined twice"):
        ProxyConfig(models=(route, route))
    with pytest.raises(ConfigError, match=r"models\.m\.hooks: no hooks named 'chaos'"):
        create_app(ProxyConfig(models=(route,)))
    # The same config is accepted once the named hooks are supplied.
    assert create_app(ProxyConfig(models=(route,)), hooks={"chaos": TranslateHooks()}) is not None
