"""The three official SDKs as agents in proxy tests: one call (streamed or not), reduced to what it saw.

Every driver takes the proxy's base URL and an httpx2.AsyncClient (in-process transport, or the network for
the loopback server) and returns a `Seen`: joined text, thinking, tool calls, the SDK's stop reason and usage.
Retries are off so that an error reaches the test as the SDK's own exception.
"""

from __future__ import annotations

import json
import ssl
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2
import openai
from google import genai
from google.genai import types

SYSTEM = "Be brief."
QUESTION = "What is the weather in Paris?"
# One TLS context for every client of the tests: building one loads the CA bundle (~50 ms), and google-genai
# builds two per client unless given one. The tests only speak plain HTTP to the proxy.
TLS = ssl.create_default_context()
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TIME_SCHEMA = {"type": "object", "properties": {"tz": {"type": "string"}}}


@dataclass
class Seen:
    """What an SDK client saw."""

    text: str = ""
    thinking: str = ""
    calls: list[tuple[str, Any]] = field(default_factory=list)
    stop: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


async def run_openai(base_url: str, http: httpx2.AsyncClient, model: str, *, stream: bool, tools: bool) -> Seen:
    """`chat.completions.create` with the openai SDK."""
    client = openai.AsyncOpenAI(api_key="client-key", base_url=f"{base_url}/v1", http_client=http, max_retries=0)
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}],
        "max_tokens": 256,
    }
    if tools:
        kwargs["tools"] = [
            {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER_SCHEMA}},
            {"type": "function", "function": {"name": "get_time", "parameters": TIME_SCHEMA}},
        ]
    seen = Seen()
    if not stream:
        r = await client.chat.completions.create(**kwargs)
        message = r.choices[0].message
        seen.text = message.content or ""
        seen.thinking = (message.model_extra or {}).get("reasoning_content") or ""
        seen.calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]  # type: ignore[union-attr]
        seen.stop = r.choices[0].finish_reason
        if r.usage:
            seen.input_tokens, seen.output_tokens = r.usage.prompt_tokens, r.usage.completion_tokens
        return seen
    calls: dict[int, list[str]] = {}
    chunks = await client.chat.completions.create(**kwargs, stream=True, stream_options={"include_usage": True})
    async for chunk in chunks:
        if chunk.usage:
            seen.input_tokens, seen.output_tokens = chunk.usage.prompt_tokens, chunk.usage.completion_tokens
        for choice in chunk.choices:
            seen.text += choice.delta.content or ""
            seen.thinking += (choice.delta.model_extra or {}).get("reasoning_content") or ""
            for tc in choice.delta.tool_calls or []:
                entry = calls.setdefault(tc.index, ["", ""])
                if tc.function and tc.function.name:
                    entry[0] = tc.function.name
                if tc.function and tc.function.arguments:
                    entry[1] += tc.function.arguments
            seen.stop = choice.finish_reason or seen.stop
    seen.calls = [(name, json.loads(args or "{}")) for name, args in (calls[i] for i in sorted(calls))]
    return seen


async def run_anthropic(base_url: str, http: httpx2.AsyncClient, model: str, *, stream: bool, tools: bool) -> Seen:
    """`messages.create` / `messages.stream` with the anthropic SDK."""
    client = anthropic.AsyncAnthropic(api_key="client-key", base_url=base_url, http_client=http, max_retries=0)
    kwargs: dict[str, Any] = {
        "model": model,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": QUESTION}],
        "max_tokens": 256,
    }
    if tools:
        kwargs["tools"] = [
            {"name": "get_weather", "input_schema": WEATHER_SCHEMA},
            {"name": "get_time", "input_schema": TIME_SCHEMA},
        ]
    if stream:
        async with client.messages.stream(**kwargs) as events:
            async for _ in events:
                pass
            message = await events.get_final_message()
    else:
        message = await client.messages.create(**kwargs)
    seen = Seen(stop=message.stop_reason)
    for block in message.content:
        if block.type == "text":
            seen.text += block.text
        elif block.type == "thinking":
            seen.thinking += block.thinking
        elif block.type == "tool_use":
            seen.calls.append((block.name, block.input))
    seen.input_tokens, seen.output_tokens = message.usage.input_tokens, message.usage.output_tokens
    return seen


async def run_gemini(base_url: str, http: httpx2.AsyncClient, model: str, *, stream: bool, tools: bool) -> Seen:
    """`models.generate_content` / `generate_content_stream` with google-genai."""
    client = genai.Client(
        api_key="client-key",
        http_options=types.HttpOptions(
            base_url=base_url,
            httpx_async_client=http,
            retry_options=types.HttpRetryOptions(attempts=1),
            client_args={"verify": TLS},
            async_client_args={"verify": TLS, "ssl": TLS},
        ),
    )
    config = types.GenerateContentConfig(system_instruction=SYSTEM, max_output_tokens=256)
    if tools:
        config.tools = [
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(name="get_weather", parameters_json_schema=WEATHER_SCHEMA),
                    types.FunctionDeclaration(name="get_time", parameters_json_schema=TIME_SCHEMA),
                ]
            )
        ]
    if stream:
        responses = [
            r
            async for r in await client.aio.models.generate_content_stream(
                model=model, contents=QUESTION, config=config
            )
        ]
    else:
        responses = [await client.aio.models.generate_content(model=model, contents=QUESTION, config=config)]
    seen = Seen()
    for r in responses:
        for candidate in r.candidates or []:
            for part in (candidate.content.parts if candidate.content else None) or []:
                if part.function_call:
                    seen.calls.append((part.function_call.name, part.function_call.args))
                elif part.text and part.thought:
                    seen.thinking += part.text
                elif part.text:
                    seen.text += part.text
            if candidate.finish_reason:
                seen.stop = candidate.finish_reason.value
        if r.usage_metadata:
            meta = r.usage_metadata
            seen.input_tokens = meta.prompt_token_count
            seen.output_tokens = (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
    return seen


DRIVERS = {"openai": run_openai, "anthropic": run_anthropic, "gemini": run_gemini}


# The exception each SDK raises for an HTTP error status.
def error_class(sdk: str, status: int) -> type[Exception]:
    """The exception class the SDK maps this status to."""
    if sdk == "gemini":
        return genai.errors.ServerError if status >= 500 else genai.errors.ClientError
    module: Any = openai if sdk == "openai" else anthropic
    by_status = {
        400: module.BadRequestError,
        401: module.AuthenticationError,
        403: module.PermissionDeniedError,
        404: module.NotFoundError,
        429: module.RateLimitError,
    }
    if sdk == "anthropic" and status == 529:
        return anthropic.OverloadedError
    return by_status.get(status, module.InternalServerError)


def error_status(exc: Exception) -> int:
    """The HTTP status an SDK exception carries."""
    if isinstance(exc, genai.errors.APIError):
        return int(exc.code)
    return int(exc.status_code)  # type: ignore[attr-defined]
