"""One config and one upstream transport serving every SDK test case, in-process or on a loopback socket.

Frontend model names say the case: `{mode}-{upstream protocol}-{scenario}`; the upstream model name is the
scenario, which picks the scripted reply. Upstream hosts: `{protocol}.up` answers normally, `{protocol}-broken.up`
breaks off its streams after a few chunks, `down.up` refuses connections.
"""

from __future__ import annotations

import httpx2

from harness import ir
from harness.protocols import registry
from harness.proxy import ModelRoute, ProxyConfig, UpstreamConfig
from tests.proxy.upstreams import KEY_ENV, Reply, ScriptedUpstream, text_reply, thinking_reply, tool_reply

SDKS = ("openai", "anthropic", "gemini")
# Each SDK's protocol is translated into another one, so every codec is both a frontend and an upstream.
TRANSLATE_TO = {"openai": "anthropic", "anthropic": "gemini", "gemini": "openai"}
MODES = ("passthrough", "translate")
ERROR_KINDS = (
    ir.ErrorKind.THROTTLED,
    ir.ErrorKind.OVERLOADED,
    ir.ErrorKind.AUTH,
    ir.ErrorKind.PERMISSION,
    ir.ErrorKind.NOT_FOUND,
    ir.ErrorKind.INVALID_REQUEST,
    ir.ErrorKind.CONTEXT_WINDOW_EXCEEDED,
    ir.ErrorKind.SERVER,
)

SCENARIOS: dict[str, Reply] = {
    "text": text_reply("Sunny, 21 °C in Paris.", input=12, output=8),
    "tools": tool_reply(("call_1", "get_weather", {"city": "Paris"}), ("call_2", "get_time", {"tz": "Europe/Paris"})),
    "thinking": thinking_reply("The user wants weather. ", "It is sunny."),
    **{
        f"err-{kind.value}": ir.IRError.of(
            kind,
            f"upstream says {kind.value}: maximum context length exceeded"
            if kind == "context_window_exceeded"
            else f"upstream says {kind.value}",
            retry_after=2 if kind.retryable else None,
        )
        for kind in ERROR_KINDS
    },
}


def upstream_of(sdk: str, mode: str) -> str:
    """The upstream protocol of an SDK's case in a mode."""
    return sdk if mode == "passthrough" else TRANSLATE_TO[sdk]


def model_name(sdk: str, mode: str, scenario: str) -> str:
    """Frontend model name of a case."""
    return f"{mode}-{upstream_of(sdk, mode)}-{scenario}"


def reply_for(request: ir.Request) -> Reply:
    """The scripted reply the upstream model name selects."""
    return SCENARIOS[request.model.removeprefix("models/")]


class Universe:
    """Upstreams of every registered protocol behind one transport, and the config that reaches them."""

    def __init__(self) -> None:
        names = set(registry.names())
        self.upstreams: dict[str, ScriptedUpstream] = {}
        for protocol in sorted(set(SDKS) | set(TRANSLATE_TO.values())):
            if protocol in names:
                self.upstreams[f"{protocol}.up"] = ScriptedUpstream(protocol, reply_for)
                self.upstreams[f"{protocol}-broken.up"] = ScriptedUpstream(protocol, reply_for, fail_after=5)

    def transport(self) -> httpx2.MockTransport:
        """Routes by host to the scripted upstreams; `down.up` refuses to connect."""

        async def handle(request: httpx2.Request) -> httpx2.Response:
            host = request.url.host
            if host not in self.upstreams:
                raise httpx2.ConnectError(f"connection to {host} refused")
            return await self.upstreams[host].handle(request)

        return httpx2.MockTransport(handle)

    def config(self) -> ProxyConfig:
        """Every case as a model entry."""
        routes: list[ModelRoute] = []
        for sdk in SDKS:
            for mode in MODES:
                protocol = upstream_of(sdk, mode)
                for scenario in SCENARIOS:
                    routes.append(
                        self._route(model_name(sdk, mode, scenario), mode, protocol, f"{protocol}.up", scenario)
                    )
                routes.append(
                    self._route(model_name(sdk, mode, "broken"), mode, protocol, f"{protocol}-broken.up", "text")
                )
                routes.append(self._route(model_name(sdk, mode, "down"), mode, protocol, "down.up", "text"))
        unique = {r.name: r for r in routes}
        return ProxyConfig(models=tuple(unique.values()))

    @staticmethod
    def _route(name: str, mode: str, protocol: str, host: str, upstream_model: str) -> ModelRoute:
        upstream = UpstreamConfig(name=host, protocol=protocol, base_url=f"http://{host}", api_key_env=KEY_ENV)
        return ModelRoute(name=name, mode=mode, upstream=upstream, upstream_model=upstream_model)  # type: ignore[arg-type]
