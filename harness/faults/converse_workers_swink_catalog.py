"""The faults of AWS Bedrock Converse, Workers AI's native route and swink's proxy stream (issue 16): the typical
translation bugs of each, as catalog entries (`harness.faults.catalog` lists them after its own). Their
implementations are in `harness.faults.converse_workers_swink_hooks`.
"""

from __future__ import annotations

from harness.faults import converse_workers_swink_hooks as n
from harness.faults.fault import Fault, Scope, witness

_STREAM = (True,)
_TOOL_SCENARIOS = ("tool-call-single", "tool-call-parallel", "tool-arguments-fragmented")

BEDROCK_FAULTS: tuple[Fault, ...] = (
    Fault(
        "bedrock-tool-input-dropped",
        "The toolUse input fragments of a Converse stream never reach the call: the client sees {} arguments.",
        "Streaming Converse readers that collect contentBlockDelta toolUse.input but build the call from the "
        "contentBlockStart's empty input (crewAIInc/crewAI#6149, fixed in #6152; tools then fail on missing "
        "fields).",
        "response side (tool_calls check)",
        n.BEDROCK_TOOL_INPUT_DROPPED,
        Scope(_TOOL_SCENARIOS, backends=("bedrock",), streams=_STREAM),
        witness("tool-call-single", "openai", "bedrock", True),
    ),
    Fault(
        "bedrock-metadata-usage-lost",
        "The answer is finished at messageStop, so the metadata frame after it (usage, metrics) is never read.",
        "Converse stream adapters that emit their finish on messageStop, before metadata arrives "
        "(Effect-TS/effect#6237, fixed in #6272; TanStack/ai#1276; run-llama/llama_index#19369): usage is 0 or "
        "missing.",
        "response side (usage_present, usage)",
        n.BEDROCK_METADATA_USAGE_LOST,
        Scope(("text-basic", "tool-call-single", "usage-with-cache"), backends=("bedrock",), streams=_STREAM),
        witness("text-basic", "openai", "bedrock", True),
    ),
    Fault(
        "bedrock-errors-by-status",
        "Bedrock HTTP errors are read by status alone, not by x-amzn-errortype: a 403 UnrecognizedClientException "
        "(a bad key) becomes permission denied.",
        "Error mappers that key on the status for every provider, while Bedrock names the exception in "
        "x-amzn-errortype and sends 403 for bad credentials and 400 for quota errors (rule: the type decides).",
        "response side (error.kind, error.exception)",
        n.BEDROCK_ERRORS_BY_STATUS,
        Scope(("error-auth-401", "error-context-overflow-400"), backends=("bedrock",)),
        witness("error-auth-401", "openai", "bedrock", False),
    ),
    Fault(
        "bedrock-exception-type-generic",
        "Every failure inside a Converse stream is written as a modelStreamErrorException, whatever it was.",
        "Converse egress that reports any failure after the 200 as one modelled exception (floci-io/floci#3043 "
        "does so for a lost upstream): a throttlingException the client would back off on becomes a model error.",
        "response side (error.kind)",
        n.BEDROCK_EXCEPTION_TYPE_GENERIC,
        Scope(("stream-error-first", "midstream-error"), frontends=("bedrock",), streams=_STREAM),
        witness("stream-error-first", "bedrock", "openai", True),
    ),
)

CLOUDFLARE_FAULTS: tuple[Fault, ...] = (
    Fault(
        "cloudflare-usage-summed",
        "Workers AI's usage figures are added up over the stream, though each one is cumulative.",
        "Readers that treat per-chunk usage as increments (newer Workers AI models send cumulative usage on every "
        "chunk, then the final figures again): the client is billed for several times the tokens.",
        "response side (usage; an OpenAI frontend loses the figures' exactness, see its losses)",
        n.CLOUDFLARE_USAGE_SUMMED,
        Scope(("usage-cumulative",), backends=("cloudflare",), streams=_STREAM),
        witness("usage-cumulative", "anthropic", "cloudflare", True),
    ),
    Fault(
        "cloudflare-final-usage-dropped",
        'The last event of a Workers AI stream, `{"response": "", "usage": ...}`, is not written.',
        "Event filters that skip events without text (rule: Workers AI's usage is cumulative and arrives only in "
        "that final empty event, before data: [DONE]).",
        "response side (usage_present, usage)",
        n.CLOUDFLARE_FINAL_USAGE_DROPPED,
        Scope(("text-basic", "tool-call-single", "long-output"), frontends=("cloudflare",), streams=_STREAM),
        witness("text-basic", "cloudflare", "openai", True),
    ),
    Fault(
        "cloudflare-done-missing",
        "A Workers AI stream ends without `data: [DONE]`.",
        "Writers that stop at the last usage event (rule: Workers AI clients take a stream without [DONE] for a "
        "cut one; workers-ai-provider reports premature termination).",
        "response side (error) and frontend wire",
        n.CLOUDFLARE_DONE_MISSING,
        Scope(("text-basic", "tool-call-single"), frontends=("cloudflare",), streams=_STREAM),
        witness("text-basic", "cloudflare", "anthropic", True),
    ),
    Fault(
        "cloudflare-tool-call-first-fragment-only",
        "A tool call is written in Workers AI's whole-call form from its first argument fragment alone.",
        "Converters from fragmenting streams (OpenAI, Anthropic) that write a native tool call as soon as it "
        "starts (rule: the native route sends each call once, with its complete arguments).",
        "response side (tool_calls check)",
        n.CLOUDFLARE_TOOL_CALL_FIRST_FRAGMENT_ONLY,
        Scope(
            ("tool-arguments-fragmented", "tool-call-single", "tool-call-parallel"),
            frontends=("cloudflare",),
            backends=("openai", "anthropic", "deepseek"),
            streams=_STREAM,
        ),
        witness("tool-arguments-fragmented", "cloudflare", "openai", True),
    ),
)

SWINK_FAULTS: tuple[Fault, ...] = (
    Fault(
        "swink-done-dropped",
        "The swink stream ends without its terminal `done` event.",
        "swink-agent's ProxyStreamFn takes a stream without done or error for a network error "
        "(adapters/src/proxy.rs); writers that just close the body after the last delta trip it.",
        "response side (error)",
        n.SWINK_DONE_DROPPED,
        Scope(("text-basic", "thinking-with-signature"), frontends=("swink",), streams=_STREAM),
        witness("text-basic", "swink", "openai", True),
    ),
    Fault(
        "swink-done-as-openai-done",
        "The swink stream ends with OpenAI's `data: [DONE]` instead of its `done` event.",
        "Shared SSE writers that close every stream the OpenAI way; ProxyStreamFn reads a bare [DONE] as the "
        "transport ending before the protocol's terminal event (adapters/src/proxy.rs).",
        "response side (error, stop reason, usage)",
        n.SWINK_DONE_AS_OPENAI_DONE,
        Scope(("text-basic", "thinking-with-signature"), frontends=("swink",), streams=_STREAM),
        witness("text-basic", "swink", "anthropic", True),
    ),
    Fault(
        "swink-content-index-per-type",
        "content_index counts blocks per type, so the answer after a thinking block is index 0 again.",
        "Converters keeping one counter per kind of delta (rule: content_index is the block's place in the "
        "message; swink's accumulate_message indexes the message content by it).",
        "response side (thinking and text content)",
        n.SWINK_CONTENT_INDEX_PER_TYPE,
        Scope(("thinking-with-signature", "thinking-after-empty-text"), frontends=("swink",), streams=_STREAM),
        witness("thinking-with-signature", "swink", "anthropic", True),
    ),
    Fault(
        "swink-thinking-signature-dropped",
        "thinking_end carries no signature, so the reasoning cannot be sent back next turn.",
        "Converters that drop the signature of reasoning blocks (Anthropic signature_delta, Gemini "
        "thoughtSignature) on the way to swink's thinking_end.signature.",
        "response side (thinking signature)",
        n.SWINK_THINKING_SIGNATURE_DROPPED,
        Scope(("thinking-with-signature", "thinking-after-empty-text"), frontends=("swink",), streams=_STREAM),
        witness("thinking-with-signature", "swink", "anthropic", True),
    ),
)

FAULTS: tuple[Fault, ...] = (*BEDROCK_FAULTS, *CLOUDFLARE_FAULTS, *SWINK_FAULTS)
"""Every fault of issue 16, in catalog order."""
