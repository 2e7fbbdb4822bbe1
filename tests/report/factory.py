"""Hand-built case results covering every verdict, and the runner events that carry them to the writers."""

from __future__ import annotations

from typing import Any

from harness import ir
from harness.runner.run_events import CaseFinished, MatrixFinished, MatrixStarted, RunnerEvent
from harness.trace import CaseResult, Check, DivergenceJSON, RunTrace, SdkView, Timings, Wire

RUN_ID = "20250101-120000-abc"
XSS = "</script><script>document.body.setAttribute('data-pwned','1')</script><img src=x onerror=alert(1)>"
"""Provider text that would run script if the page ever put data into innerHTML or broke out of the blob."""
WEATHER = ir.Tool(name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})


def events(chunks: list[str], stop: str = "end_turn") -> list[ir.StreamEvent]:
    """A text stream: start, one text block of `chunks`, done."""
    return [
        ir.MessageStart(id="msg_1", model="m"),
        ir.TextStart(index=0),
        *[ir.TextDelta(index=0, text=c) for c in chunks],
        ir.TextEnd(index=0),
        ir.Done(stop_reason=ir.StopReason(kind=stop), usage=ir.Usage(input_tokens=12, output_tokens=3)),
    ]


def run(
    role: str,
    scenario: str,
    client: str,
    upstream: str,
    *,
    stream: bool = True,
    chunks: tuple[str, ...] = ("Hello", " world"),
    checks: tuple[tuple[str, bool], ...] = (("text_equals", True), ("stop_reason", True)),
    tools: bool = False,
    sent_tools: bool | None = None,
) -> RunTrace:
    """One run trace that saw `chunks` of text; `sent_tools` False means the proxy dropped the tools upstream."""
    text = "".join(chunks)
    request = ir.Request(
        model="m",
        messages=[ir.Message(role="user", content=[ir.TextPart(text="hi")])],
        tools=[WEATHER] if tools else [],
    )
    upstream_request = request.model_copy(update={"tools": [WEATHER] if (sent_tools is None and tools) else []})
    failed = any(not ok for _, ok in checks)
    return RunTrace(
        case_id=f"{scenario}[{client}->{upstream}]",
        role=role,
        scenario=scenario,
        client=client,
        upstream=upstream,
        mode="translate" if role == "translated" else "passthrough",
        stream=stream,
        frontend_request=request,
        upstream_request=upstream_request,
        upstream_status=200,
        sdk=SdkView(
            events=events(list(chunks)) if stream else None,
            response=ir.Response(
                id="msg_1",
                model="m",
                content=[ir.TextPart(text=text)],
                stop_reason=ir.StopReason(kind="end_turn"),
                usage=ir.Usage(input_tokens=12, output_tokens=3),
            ),
        ),
        checks=[
            Check(name=n, passed=ok, expected="Hello world" if n == "text_equals" else None, actual=text)
            for n, ok in checks
        ],
        status="failed" if failed else "ok",
        timings=Timings(total_ms=12.5, first_byte_ms=3.0),
        wire=Wire(
            cassette=f"{upstream}/{scenario}.yaml",
            interaction=0,
            upstream='event: content_block_delta\ndata: {"delta":{"text":"' + text + '"}}\n\n',
            frontend="data: [DONE]\n\n",
            upstream_chunks=2,
            frontend_chunks=3,
        ),
    )


def case(
    scenario: str,
    frontend: str,
    backend: str,
    verdict: str,
    reason: str,
    *,
    stream: bool = True,
    runs: dict[str, RunTrace] | None = None,
    first: DivergenceJSON | None = None,
    request_divs: list[DivergenceJSON] | None = None,
    known: str | None = None,
) -> CaseResult:
    """A case result; the response divergences are `[first]` unless request divergences are given."""
    mode = "stream" if stream else "nonstream"
    if runs is None:
        runs = {
            "baseline_frontend": run("baseline_frontend", scenario, frontend, frontend, stream=stream),
            "translated": run("translated", scenario, frontend, backend, stream=stream),
            "baseline_backend": run("baseline_backend", scenario, backend, backend, stream=stream),
        }
    return CaseResult(
        case_id=f"{scenario}[{frontend}->{backend},{mode}]",
        scenario=scenario,
        frontend=frontend,
        backend=backend,
        stream=stream,
        verdict=verdict,
        reason=reason,
        first_divergence=first,
        request_divergences=request_divs or [],
        response_divergences=[first] if first is not None and not request_divs else [],
        runs=runs,
        known=known,
        duration_ms=40.0,
    )


def _three(scenario: str, frontend: str, backend: str, translated: RunTrace, **kw: Any) -> dict[str, RunTrace]:
    """Both baselines as plain passing runs, with the given translated run."""
    return {
        "baseline_frontend": run("baseline_frontend", scenario, frontend, frontend, **kw),
        "translated": translated,
        "baseline_backend": run("baseline_backend", scenario, backend, backend, **kw),
    }


def text_bug() -> CaseResult:
    """Translated stream loses text: a response-side proxy bug at events[2].text."""
    first = DivergenceJSON(
        path="events[2].text", left="Hello world", right="Hello wor", event_index=2, change="values_changed"
    )
    bad = run(
        "translated",
        "text-basic",
        "anthropic",
        "openai",
        chunks=("Hello", " wor"),
        checks=(("text_equals", False), ("stop_reason", True)),
    )
    runs = _three("text-basic", "anthropic", "openai", bad)
    reason = "translated run fails (text_equals)"
    return case("text-basic", "anthropic", "openai", "proxy_bug_response", reason, first=first, runs=runs)


def tools_bug() -> CaseResult:
    """The proxy drops the tools from the upstream request: a request-side proxy bug."""
    first = DivergenceJSON(
        path="request.tools[0]", left=ir.to_json(WEATHER), right="<missing>", change="iterable_item_removed"
    )
    bad = run("translated", "tools-stream", "anthropic", "openai", tools=True, sent_tools=False)
    runs = _three("tools-stream", "anthropic", "openai", bad, tools=True)
    reason = "upstream request differs from the client's request at request.tools[0]"
    return case(
        "tools-stream", "anthropic", "openai", "proxy_bug_request", reason, first=first, request_divs=[first], runs=runs
    )


def backend_issue() -> CaseResult:
    """The backend's own baseline fails the same check as the translated run."""
    failing = (("retry_after", False),)
    runs = {
        "baseline_frontend": run("baseline_frontend", "rate-limit", "openai", "openai", stream=False),
        "translated": run("translated", "rate-limit", "openai", "anthropic", stream=False, checks=failing),
        "baseline_backend": run(
            "baseline_backend", "rate-limit", "anthropic", "anthropic", stream=False, checks=failing
        ),
    }
    reason = "the backend's own baseline fails the same way (retry_after)"
    return case("rate-limit", "openai", "anthropic", "backend_issue", reason, stream=False, runs=runs)


def markup_case() -> CaseResult:
    """A baseline issue whose provider text and reason carry HTML/script markup."""
    base = run(
        "baseline_frontend",
        "markup",
        "anthropic",
        "anthropic",
        stream=False,
        chunks=(XSS,),
        checks=(("text_equals", False),),
    )
    runs = {
        "baseline_frontend": base,
        "translated": run("translated", "markup", "anthropic", "gemini", stream=False, chunks=(XSS,)),
        "baseline_backend": run("baseline_backend", "markup", "gemini", "gemini", stream=False, chunks=(XSS,)),
    }
    reason = f"the frontend's own baseline fails ({XSS})"
    return case("markup", "anthropic", "gemini", "baseline_issue", reason, stream=False, runs=runs)


def known_bug() -> CaseResult:
    """A proxy bug listed in the known-failures file."""
    first = DivergenceJSON(path="response.usage.output_tokens", left=3, right=0, change="values_changed")
    reason = "translated run diverges from the frontend baseline at response.usage.output_tokens"
    known = "gemini usage arrives late (issue 12)"
    return case("usage", "openai", "gemini", "proxy_bug_response", reason, first=first, known=known)


def sample_cases() -> list[CaseResult]:
    """Seven cases over 2 frontends x 3 backends: every verdict, a known bug, and provider text with markup."""
    return [
        case("text-basic", "openai", "anthropic", "pass", "all three runs agree"),
        text_bug(),
        tools_bug(),
        backend_issue(),
        case("thinking", "openai", "gemini", "unsupported", "declared unsupported: thinking", stream=False, runs={}),
        markup_case(),
        known_bug(),
    ]


def sample_events(cases: list[CaseResult] | None = None, *, duration_s: float = 3.25) -> list[RunnerEvent]:
    """MatrixStarted, one CaseFinished per case, MatrixFinished, as the runner would emit them."""
    cases = sample_cases() if cases is None else cases
    counts: dict[str, int] = {}
    for c in cases:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    new = [c.case_id for c in cases if c.verdict.startswith("proxy_bug") and not c.known]
    return [
        MatrixStarted(
            run_id=RUN_ID,
            case_ids=[c.case_id for c in cases],
            frontends=["anthropic", "openai"],
            backends=["anthropic", "openai", "gemini"],
            scenarios=sorted({c.scenario for c in cases}),
        ),
        *(CaseFinished(c) for c in cases),
        MatrixFinished(
            run_id=RUN_ID, duration_s=duration_s, counts=counts, new_proxy_bugs=new, exit_code=1 if new else 0
        ),
    ]


def big_matrix(wire_chars: int = 4000, deltas: int = 40) -> list[CaseResult]:
    """704 cases (4 frontends x 8 backends x 11 scenarios x stream/non-stream) shaped like a full run: baseline
    runs are shared between the cases of one scenario, each run has `deltas` text deltas and wire excerpts of
    `wire_chars` characters, every fifth case is a proxy bug."""
    frontends = ["anthropic", "openai", "gemini", "ollama"]
    backends = ["anthropic", "openai", "gemini", "ollama", "groq", "mistral", "deepseek", "qwen-xml"]
    baselines: dict[tuple[str, str, bool], RunTrace] = {}

    def baseline(role: str, scenario: str, protocol: str, stream: bool) -> RunTrace:
        key = (scenario, protocol, stream)
        if key not in baselines:
            chunks = tuple(f"{scenario} word{i} " for i in range(deltas))
            trace = run(role, scenario, protocol, protocol, stream=stream, chunks=chunks)
            wire = trace.wire.model_copy(update={"upstream": "x" * wire_chars, "frontend": "y" * wire_chars})
            baselines[key] = trace.model_copy(update={"wire": wire})
        return baselines[key].model_copy(update={"role": role})

    out: list[CaseResult] = []
    for scenario in [f"scenario-{i:02d}" for i in range(11)]:
        for f in frontends:
            for b in backends:
                for stream in (True, False):
                    chunks = tuple(f"{scenario} word{i} " for i in range(deltas))
                    bug = len(out) % 5 == 0
                    translated = run("translated", scenario, f, b, stream=stream, chunks=chunks[:-1] if bug else chunks)
                    wire = translated.wire.model_copy(
                        update={"upstream": "u" * wire_chars, "frontend": "f" * wire_chars}
                    )
                    runs = {
                        "baseline_frontend": baseline("baseline_frontend", scenario, f, stream),
                        "translated": translated.model_copy(update={"wire": wire}),
                        "baseline_backend": baseline("baseline_backend", scenario, b, stream),
                    }
                    first = DivergenceJSON(path="response.content[0].text", left="a", right="b") if bug else None
                    verdict, reason = ("proxy_bug_response", "diverges") if bug else ("pass", "all three runs agree")
                    out.append(case(scenario, f, b, verdict, reason, stream=stream, runs=runs, first=first))
    return out


def _calls(*names: str) -> list[ir.StreamEvent]:
    events: list[ir.StreamEvent] = [ir.MessageStart(id="m", model="m")]
    for i, name in enumerate(names):
        events += [
            ir.ToolCallStart(index=i, id=f"call_{i}", name=name),
            ir.ToolCallDelta(index=i, arguments='{"city": "Paris"}'),
            ir.ToolCallEnd(index=i),
        ]
    return [*events, ir.Done(stop_reason=ir.StopReason(kind="tool_use"))]


def dropped_call(backend: str = "openai") -> CaseResult:
    """The proxy drops the second of three tool calls; the runs have chunk times for the timeline."""
    scenario, f, b = "tool-call-parallel", "anthropic", backend
    runs = {
        role: run(role, scenario, f, f if role == "baseline_frontend" else b)
        for role in ("baseline_frontend", "translated", "baseline_backend")
    }
    full, dropped = _calls("get_weather", "get_time", "get_news"), _calls("get_weather", "get_news")
    for role, events in (("baseline_frontend", full), ("translated", dropped)):
        wire = Wire(
            upstream="a" * 30,
            frontend="b" * 20,
            upstream_chunks=3,
            frontend_chunks=2,
            upstream_offsets=[0, 10, 20],
            frontend_offsets=[0, 10],
            upstream_times_ms=[1.0, 2.0, 3.0],
            frontend_times_ms=[2.5, 8.0],
            event_chunks=[0] * 4 + [1] * 3 + [2] * (len(events) - 7),
            frontend_events=[4, len(events)],
        )
        runs[role] = runs[role].model_copy(
            update={"sdk": SdkView(events=events), "upstream_events": events, "wire": wire}
        )
    first = DivergenceJSON(path="events[4].name", left="get_time", right="get_news", event_index=4)
    return case(scenario, f, b, "proxy_bug_response", "translated run fails (tool_calls)", runs=runs, first=first)
