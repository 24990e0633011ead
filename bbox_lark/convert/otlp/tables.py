"""The OTLP mapping as data: names, limits, the attribute vocabularies and the mapping table
that ``docs/formats/otel.md`` and ``docs/convert.md`` render."""

from __future__ import annotations

from bbox_lark.convert.base import MappingRow

#: The OpenTelemetry GenAI semantic conventions this mapping follows (``gen_ai.*`` names).
SEMCONV_VERSION = "1.37.0"
#: The schema URL written on each scope.
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
#: The instrumentation scope of every span.
SCOPE_NAME = "bbox-lark"
#: ``service.name`` of the resource.
SERVICE_NAME = "bbox-lark"

#: The longest string attribute written, in characters (longer content is cut and marked
#: ``…[cut N chars]``); Phoenix and Langfuse keep attributes of this size comfortably.
MAX_ATTRIBUTE_CHARS = 8192
#: The most spans ``send`` puts in one request, and the most a written batch holds: well
#: below Phoenix's span queue (20,000) and the 4 MiB gRPC/HTTP body limits of collectors.
BATCH_SPANS = 1000

#: Header keys whose value names the agent (the root span's name), first found wins.
AGENT_KEYS = ("agent", "runner", "client", "slug")
#: Header keys copied to the root span as ``bbox.header.KEY`` (short scalars only).
HEADER_KEYS = ("repo_sha", "branch", "cwd", "model", "agent", "runner", "version", "client_version", "format")
#: Tool names that launch a subagent in Claude Code logs (their thread's spans go under them).
LAUNCHERS = frozenset({"Task", "Agent", "task", "agent"})

#: Span kinds (``opentelemetry.proto.trace.v1.Span.SpanKind``).
KIND_INTERNAL = 1
KIND_CLIENT = 3
#: Status codes (``Status.StatusCode``).
STATUS_UNSET = 0
STATUS_OK = 1
STATUS_ERROR = 2

#: A span's role -> (operation name, GenAI span kind, OpenInference span kind).
ROLES: dict[str, tuple[str, int, str]] = {
    "agent": ("invoke_agent", KIND_INTERNAL, "AGENT"),
    "chat": ("chat", KIND_CLIENT, "LLM"),
    "tool": ("execute_tool", KIND_INTERNAL, "TOOL"),
}

#: Outcome of a call (:data:`bbox_lark.numbers.outcomes.OUTCOMES`) -> span status.
OUTCOME_STATUS: dict[str, int] = {
    "ok": STATUS_OK,
    "error": STATUS_ERROR,
    "pending": STATUS_UNSET,
    "skipped": STATUS_UNSET,
    "retry": STATUS_ERROR,
    "unknown": STATUS_UNSET,
}

#: Line kinds that make (or join) a ``chat`` span: a model response's lines.
RESPONSE_KINDS = frozenset({"agent", "thinking", "todos"})
#: Line kinds that end a model response (the next agent line starts a new one).
RESPONSE_BREAKS = frozenset({"user", "observation"})

#: bbox → OTLP.
EXPORT_MAPPING = (
    MappingRow(
        "a session (one file, or one trajectory of an ATIF JSON Lines file)",
        "one trace",
        "kept",
        "trace id = the first 16 bytes of SHA-256 of the session id (of the header text when the"
        " id is empty)",
    ),
    MappingRow(
        "header (`id`, `agent`, `model`, `cwd`, ...)",
        "root span `invoke_agent {agent}` (INTERNAL, OpenInference AGENT)",
        "kept",
        "`gen_ai.agent.name`, `gen_ai.conversation.id`, `session.id`, `bbox.header.*`",
    ),
    MappingRow(
        "model response (`a:`/`th:`/`td:` lines with the same usage, until `u:`/`o:`)",
        "`chat {model}` span (CLIENT, OpenInference LLM)",
        "kept",
        "`gen_ai.usage.*` and `llm.token_count.*` from the numbers module",
    ),
    MappingRow(
        "usage `tokens_in` + `tokens_cached`, or `# metrics prompt_tokens`",
        "`gen_ai.usage.input_tokens`, `llm.token_count.prompt`",
        "kept",
        "input including cache reads",
    ),
    MappingRow(
        "`tokens_cached` / `cached_tokens`",
        "`gen_ai.usage.cache_read.input_tokens`, `llm.token_count.prompt_details.cache_read`",
        "kept",
    ),
    MappingRow(
        "`cache_creation_input_tokens` (where stated)",
        "`gen_ai.usage.cache_creation.input_tokens`, `llm.token_count.prompt_details.cache_write`",
        "kept",
    ),
    MappingRow(
        "`tokens_out` (largest of the response) / `completion_tokens`",
        "`gen_ai.usage.output_tokens`, `llm.token_count.completion`",
        "kept",
    ),
    MappingRow(
        "`cost_usd` of a `# metrics` line",
        "`gen_ai.usage.cost`, `llm.cost.total`",
        "kept",
        "`bbox.cost.source` = `stated`",
    ),
    MappingRow(
        "session cost (`@end cost_usd=`, summary comment; else the estimate)",
        "root span `gen_ai.usage.cost`, `llm.cost.total`",
        "kept",
        "`bbox.cost.source` = `stated` or `estimated`",
    ),
    MappingRow(
        "call (`t` `t!` `c` `s` `p` `q` `x`, with its completion)",
        "`execute_tool {tool}` span (INTERNAL, OpenInference TOOL)",
        "kept",
        "`gen_ai.tool.name`, `gen_ai.tool.call.id`, `tool.name`; outcome → status (ok OK, error and"
        " retry ERROR, else UNSET)",
    ),
    MappingRow(
        "call never completed",
        "span ending with the session, status UNSET",
        "synthesized",
        "`bbox.call.completed` = false",
    ),
    MappingRow(
        "`x:` subagent call", "`execute_tool {type}` span with a child `invoke_agent {type}` span", "kept"
    ),
    MappingRow(
        "`tid=` thread (Claude Code subagent logs, sidechains)",
        "`invoke_agent {tid}` span under the tool span that launched it",
        "kept",
        "its lines' spans are its children",
    ),
    MappingRow(
        "`ts=` and `# t=` times",
        "span start and end (ns)",
        "kept",
        "monotonic; lines without a time get the last time + 1 ms (`bbox.time.synthetic` = true)",
    ),
    MappingRow(
        "message and tool text",
        "`gen_ai.input.messages`, `gen_ai.output.messages`,"
        " `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`, `input.value`, `output.value`",
        "kept",
        f"only with `--content`; secrets redacted; cut at {MAX_ATTRIBUTE_CHARS} characters",
    ),
    MappingRow(
        "comments, continuation lines, lifecycle lines, unknown lines, blank lines",
        "no span",
        "dropped",
        "counted in the fidelity report",
    ),
)
