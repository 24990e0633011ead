"""OpenTelemetry spans of a session (``bbox_lark/convert/otlp/``), pinned down where mutation
testing found nothing holding them: every span of a few sessions whole (name, parent, kind,
times, status and each attribute: tokens, cost, ids, threads), the report rows, the content
and its redaction, the OTLP/JSON request against the protobuf one (docs/testing.md,
"Mutation testing"; docs/formats/otel.md)."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest

import bbox_lark
from bbox_lark.convert import convert
from bbox_lark.convert.base import Fidelity, WriteContext
from bbox_lark.convert.otlp import Span, batches, trace_id_for
from bbox_lark.convert.otlp.encode import to_json, to_protobuf
from bbox_lark.convert.otlp.parts import SYNTHETIC_BASE_NS, Clock, cut, estimate, usage_attributes
from bbox_lark.convert.otlp.spans import SpanBuilder, session_spans

pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2", reason="the otel extra")

#: Attributes every span of a kind has, left out of the renderings below.
COMMON = ("session.id", "gen_ai.conversation.id", "gen_ai.operation.name", "openinference.span.kind")


def spans_of(text: str, content: bool = False, size: int = 1000) -> tuple[list[Span], Fidelity]:
    report = Fidelity()
    ctx = WriteContext(report, {"content": content})
    found = [s for b in batches(bbox_lark.iter_nodes(io.StringIO(text)), ctx, size) for s in b.spans]
    return found, report


def render(spans: list[Span]) -> list[str]:
    """Each span as a line (its name and source line, its parent's, kind, times in ms from the
    first start, status), then its attributes, one a line, in the order written."""
    names = {s.span_id: f"{s.name}@{s.line}" for s in spans}
    base = min(s.start_ns for s in spans)
    lines = []
    for s in spans:
        parent = names[s.parent_id] if s.parent_id else "-"
        message = f" {s.status_message!r}" if s.status_message else ""
        times = f"{(s.start_ns - base) // 10**6}..{(s.end_ns - base) // 10**6}ms"
        lines.append(f"{s.name}@{s.line} <- {parent} kind={s.kind} {times} status={s.status}{message}")
        lines += [f"  {k}={v!r}" for k, v in s.attributes.items() if k not in COMMON]
    return lines


def rows(report: Fidelity) -> list[tuple[str, str, int, tuple[int, ...]]]:
    return [(e.action, e.what, e.count, e.lines) for e in report.entries]


def session(*body: str, header: str = "id: s-1\nrepo_sha: abcdef1\nmodel: gpt-x\n") -> str:
    return "---\nformat: bbox/1\n" + header + "---\n" + "".join(line + "\n" for line in body)


METRICS = (
    session(
        "a: one step=1 ts=2026-01-01T10:00:00Z",
        "# metrics prompt_tokens=7 step=x",
        "# metrics step=1 prompt_tokens=500 completion_tokens=20 cached_tokens=300 cost_usd=0.5"
        " extra.cache_creation_input_tokens=40",
        "# metrics step=9 prompt_tokens=1",
        "a: two step=2 tokens_in=10 tokens_out=4 tokens_cached=5",
        "a: sub tid=k1 tokens_in=3 tokens_out=1 # metrics prompt_tokens=50 completion_tokens=6",
        "a: main again step=2 tokens_in=10 tokens_out=9 tokens_cached=5",
        "u: next",
        "a: three # metrics completion_tokens=3 cache_creation_input_tokens=x",
        "u: more",
        "a: four tokens_in=2 tokens_out=1 # metrics prompt_tokens=10 completion_tokens=1 cached_tokens=30"
        " cache_creation_input_tokens=4",
    ),
    False,
)


def test_usage_and_metrics_go_on_the_chat_span_of_their_step_and_thread() -> None:
    """`# metrics` of a step, of a thread, with a cached count over the prompt (taken as uncached),
    with cache writes; a line's usage with the largest output of its response; metrics matching no
    response dropped."""
    spans, report = spans_of(*METRICS)
    assert render(spans) == [
        "chat gpt-x@7 <- invoke_agent agent@0 kind=3 0..0ms status=0",
        "  gen_ai.request.model='gpt-x'",
        "  gen_ai.response.model='gpt-x'",
        "  llm.model_name='gpt-x'",
        "  bbox.step=1",
        "  gen_ai.usage.cache_creation.input_tokens=40",
        "  llm.token_count.prompt_details.cache_write=40",
        "  bbox.cost.source='stated'",
        "  gen_ai.usage.input_tokens=500",
        "  llm.token_count.prompt=500",
        "  gen_ai.usage.cache_read.input_tokens=300",
        "  llm.token_count.prompt_details.cache_read=300",
        "  gen_ai.usage.output_tokens=20",
        "  llm.token_count.completion=20",
        "  llm.token_count.total=520",
        "  gen_ai.usage.cost=0.5",
        "  llm.cost.total=0.5",
        "chat gpt-x@11 <- invoke_agent agent@0 kind=3 4..6ms status=0",
        "  gen_ai.request.model='gpt-x'",
        "  gen_ai.response.model='gpt-x'",
        "  llm.model_name='gpt-x'",
        "  bbox.step=2",
        "  gen_ai.usage.input_tokens=15",
        "  llm.token_count.prompt=15",
        "  gen_ai.usage.cache_read.input_tokens=5",
        "  llm.token_count.prompt_details.cache_read=5",
        "  gen_ai.usage.output_tokens=9",
        "  llm.token_count.completion=9",
        "  llm.token_count.total=24",
        "  bbox.time.synthetic=True",
        "chat gpt-x@15 <- invoke_agent agent@0 kind=3 8..8ms status=0",
        "  gen_ai.request.model='gpt-x'",
        "  gen_ai.response.model='gpt-x'",
        "  llm.model_name='gpt-x'",
        "  gen_ai.usage.output_tokens=3",
        "  llm.token_count.completion=3",
        "  llm.token_count.total=3",
        "  bbox.time.synthetic=True",
        "chat gpt-x@17 <- invoke_agent agent@0 kind=3 10..10ms status=0",
        "  gen_ai.request.model='gpt-x'",
        "  gen_ai.response.model='gpt-x'",
        "  llm.model_name='gpt-x'",
        "  gen_ai.usage.cache_creation.input_tokens=4",
        "  llm.token_count.prompt_details.cache_write=4",
        "  gen_ai.usage.input_tokens=40",
        "  llm.token_count.prompt=40",
        "  gen_ai.usage.cache_read.input_tokens=30",
        "  llm.token_count.prompt_details.cache_read=30",
        "  gen_ai.usage.output_tokens=1",
        "  llm.token_count.completion=1",
        "  llm.token_count.total=41",
        "  bbox.time.synthetic=True",
        "chat gpt-x@12 <- invoke_agent k1@12 kind=3 5..5ms status=0",
        "  gen_ai.request.model='gpt-x'",
        "  gen_ai.response.model='gpt-x'",
        "  llm.model_name='gpt-x'",
        "  gen_ai.usage.input_tokens=50",
        "  llm.token_count.prompt=50",
        "  gen_ai.usage.output_tokens=6",
        "  llm.token_count.completion=6",
        "  llm.token_count.total=56",
        "  bbox.time.synthetic=True",
        "invoke_agent k1@12 <- invoke_agent agent@0 kind=1 5..10ms status=0",
        "  gen_ai.agent.name='k1'",
        "  gen_ai.agent.id='k1'",
        "  bbox.tid='k1'",
        "invoke_agent agent@0 <- - kind=1 0..10ms status=0",
        "  gen_ai.agent.name='agent'",
        "  bbox.semconv.version='1.37.0'",
        "  bbox.header.repo_sha='abcdef1'",
        "  bbox.header.model='gpt-x'",
        "  bbox.header.format='bbox/1'",
        "  bbox.time.synthetic=True",
    ]
    assert rows(report) == [
        ("kept", "model responses as chat spans", 5, (7, 11, 12, 15, 17)),
        ("kept", "# metrics (usage and cost of the chat span of their step)", 5, (8, 9, 12, 15, 17)),
        ("dropped", "# metrics matched to no model response", 1, (10,)),
        ("kept", "subagent threads (tid=) as invoke_agent spans", 1, (12,)),
        ("kept", "user lines (as the next chat span's input)", 2, (14, 16)),
        ("synthesized", "line times (no ts=: the last time + 1 ms, bbox.time.synthetic)", 10, (0,)),
        ("kept", "spans written", 7, (0,)),
    ]


CALLS = (
    session(
        "@start ts=2026-01-01T10:00:00Z",
        "u: fix it",
        "a: on it tokens_in=5 tokens_out=1",
        "t!:read id=c1 step=3 a.rs → [running]",
        "t:grep → [err: no match]",
        "o: id=c1 → [ok] 12 lines",
        "t:edit id=c2 tokens_in=6 tokens_out=2 → [ok]",
        "o: → [ok] stray",
        "x:explore id=s1 → [launched]",
        "o: id=s1 → [ok] done ts=2026-01-01T10:00:09Z",
        "t!:Task id=t1 → [running]",
        "a: sub work tid=w1 tokens_in=1 tokens_out=1",
        "o: id=t1 → [ok] finished",
        "t!:build id=c9 → [running]",
        "x:plan id=s2 → [launched]",
        "# t=00:00:30",
        "@end cost_usd=0.25",
        "# tokens=5 cost=9",
        header="id: s-2\nrepo_sha: abcdef1\nrunner: r1\nagent: ''\nclient: c\nmodel: m0\n",
    ),
    False,
)


def test_calls_subagents_threads_times_and_the_stated_cost() -> None:
    """Calls with their outcome as status, a result's text as an error's message, a call that never
    completes ended with the session, an `x:` call's own subagent span, a `tid=` thread under the
    Task call open when it began, `# t=` after the first time, `@end`'s cost before the summary's."""
    spans, report = spans_of(*CALLS)
    assert render(spans) == [
        "execute_tool grep@14 <- invoke_agent r1@0 kind=1 4..4ms status=2 '[err: no match]'",
        "  gen_ai.tool.name='grep'",
        "  tool.name='grep'",
        "  bbox.call.kind='tool'",
        "  bbox.call.outcome='error'",
        "  bbox.time.synthetic=True",
        "execute_tool read@13 <- invoke_agent r1@0 kind=1 3..5ms status=1",
        "  gen_ai.tool.name='read'",
        "  tool.name='read'",
        "  bbox.call.kind='tool_start'",
        "  gen_ai.tool.call.id='c1'",
        "  bbox.step=3",
        "  bbox.call.outcome='ok'",
        "  bbox.time.synthetic=True",
        "chat m0@12 <- invoke_agent r1@0 kind=3 2..4ms status=0",
        "  gen_ai.request.model='m0'",
        "  gen_ai.response.model='m0'",
        "  llm.model_name='m0'",
        "  gen_ai.usage.input_tokens=5",
        "  llm.token_count.prompt=5",
        "  gen_ai.usage.output_tokens=1",
        "  llm.token_count.completion=1",
        "  llm.token_count.total=6",
        "  bbox.time.synthetic=True",
        "execute_tool edit@16 <- invoke_agent r1@0 kind=1 6..6ms status=1",
        "  gen_ai.tool.name='edit'",
        "  tool.name='edit'",
        "  bbox.call.kind='tool'",
        "  gen_ai.tool.call.id='c2'",
        "  bbox.call.outcome='ok'",
        "  bbox.time.synthetic=True",
        "invoke_agent explore@18 <- execute_tool explore@18 kind=1 8..9000ms status=0",
        "  gen_ai.agent.name='explore'",
        "  bbox.time.synthetic=True",
        "execute_tool explore@18 <- invoke_agent r1@0 kind=1 8..9000ms status=1",
        "  gen_ai.tool.name='explore'",
        "  tool.name='explore'",
        "  bbox.call.kind='subagent'",
        "  gen_ai.tool.call.id='s1'",
        "  bbox.call.outcome='ok'",
        "  bbox.time.synthetic=True",
        "chat m0@21 <- invoke_agent w1@21 kind=3 9002..9002ms status=0",
        "  gen_ai.request.model='m0'",
        "  gen_ai.response.model='m0'",
        "  llm.model_name='m0'",
        "  gen_ai.usage.input_tokens=1",
        "  llm.token_count.prompt=1",
        "  gen_ai.usage.output_tokens=1",
        "  llm.token_count.completion=1",
        "  llm.token_count.total=2",
        "  bbox.time.synthetic=True",
        "invoke_agent w1@21 <- execute_tool Task@20 kind=1 9002..9002ms status=0",
        "  gen_ai.agent.name='w1'",
        "  gen_ai.agent.id='w1'",
        "  bbox.tid='w1'",
        "execute_tool Task@20 <- invoke_agent r1@0 kind=1 9001..9003ms status=1",
        "  gen_ai.tool.name='Task'",
        "  tool.name='Task'",
        "  bbox.call.kind='tool_start'",
        "  gen_ai.tool.call.id='t1'",
        "  bbox.call.outcome='ok'",
        "  bbox.time.synthetic=True",
        "chat m0@16 <- invoke_agent r1@0 kind=3 6..6ms status=0",
        "  gen_ai.request.model='m0'",
        "  gen_ai.response.model='m0'",
        "  llm.model_name='m0'",
        "  gen_ai.usage.input_tokens=6",
        "  llm.token_count.prompt=6",
        "  gen_ai.usage.output_tokens=2",
        "  llm.token_count.completion=2",
        "  llm.token_count.total=8",
        "  bbox.time.synthetic=True",
        "execute_tool build@23 <- invoke_agent r1@0 kind=1 9004..30002ms status=0",
        "  gen_ai.tool.name='build'",
        "  tool.name='build'",
        "  bbox.call.kind='tool_start'",
        "  gen_ai.tool.call.id='c9'",
        "  bbox.call.completed=False",
        "  bbox.call.outcome='pending'",
        "  bbox.time.synthetic=True",
        "invoke_agent plan@24 <- execute_tool plan@24 kind=1 9005..30002ms status=0",
        "  gen_ai.agent.name='plan'",
        "  bbox.time.synthetic=True",
        "execute_tool plan@24 <- invoke_agent r1@0 kind=1 9005..30002ms status=0",
        "  gen_ai.tool.name='plan'",
        "  tool.name='plan'",
        "  bbox.call.kind='subagent'",
        "  gen_ai.tool.call.id='s2'",
        "  bbox.call.completed=False",
        "  bbox.call.outcome='pending'",
        "  bbox.time.synthetic=True",
        "invoke_agent r1@0 <- - kind=1 0..30002ms status=0",
        "  gen_ai.agent.name='r1'",
        "  bbox.semconv.version='1.37.0'",
        "  bbox.header.repo_sha='abcdef1'",
        "  bbox.header.model='m0'",
        "  bbox.header.runner='r1'",
        "  bbox.header.format='bbox/1'",
        "  bbox.session.cost_usd=0.25",
        "  bbox.cost.source='stated'",
        "  bbox.time.synthetic=True",
    ]
    assert rows(report) == [
        ("dropped", "lifecycle lines (times and the stated cost only)", 2, (10, 26)),
        ("kept", "user lines (as the next chat span's input)", 1, (11,)),
        ("kept", "model responses as chat spans", 3, (12, 16, 21)),
        ("kept", "calls as execute_tool spans", 5, (14, 13, 16, 18, 20)),
        ("dropped", "observations that complete no call", 1, (17,)),
        ("kept", "subagent threads (tid=) as invoke_agent spans", 1, (21,)),
        ("dropped", "comment lines", 1, (25,)),
        ("dropped", "comment lines (the summary's cost goes on the root span)", 1, (27,)),
        ("synthesized", "ends of calls never completed (at the session's end, status UNSET)", 2, (23, 24)),
        ("synthesized", "line times (no ts=: the last time + 1 ms, bbox.time.synthetic)", 15, (0,)),
        ("kept", "spans written", 14, (0,)),
    ]


CONTENT = (
    session(
        "u: my key is AKIA" + "IOSFODNN7EXAMPLE ts=2026-01-01T10:00:00Z",
        "  and more",
        "th: thinking it over",
        "  deeper",
        "a: answer",
        "  second line",
        "t:read a.rs mode=fast → [ok] fine",
        "  rest of result",
        "t:fail → [err: bad]",
        "u: again",
        "a: last",
        "t:noresult",
    ),
    True,
)


def test_content_is_redacted_and_gathered_per_response() -> None:
    """With `--content`: the user's text as the next response's input (a secret redacted), the
    response's lines and their continuation lines as its output (thinking marked), a call's
    arguments and result, the first input and last output on the root."""
    spans, report = spans_of(*CONTENT)
    assert render(spans) == [
        "execute_tool read@13 <- invoke_agent agent@0 kind=1 3..3ms status=1",
        "  gen_ai.tool.name='read'",
        "  tool.name='read'",
        "  bbox.call.kind='tool'",
        '  gen_ai.tool.call.arguments=\'{"args": ["a.rs"], "fields": {"mode": "fast"}}\'',
        '  input.value=\'{"args": ["a.rs"], "fields": {"mode": "fast"}}\'',
        "  bbox.call.outcome='ok'",
        "  gen_ai.tool.call.result='fine'",
        "  output.value='fine'",
        "  bbox.time.synthetic=True",
        "execute_tool fail@15 <- invoke_agent agent@0 kind=1 4..4ms status=2 '[err: bad]'",
        "  gen_ai.tool.name='fail'",
        "  tool.name='fail'",
        "  bbox.call.kind='tool'",
        '  gen_ai.tool.call.arguments=\'{"args": [], "fields": {}}\'',
        '  input.value=\'{"args": [], "fields": {}}\'',
        "  bbox.call.outcome='error'",
        "  gen_ai.tool.call.result='bad'",
        "  output.value='bad'",
        "  bbox.time.synthetic=True",
        "chat gpt-x@9 <- invoke_agent agent@0 kind=3 1..4ms status=0",
        "  gen_ai.request.model='gpt-x'",
        "  gen_ai.response.model='gpt-x'",
        "  llm.model_name='gpt-x'",
        "  input.value='my key is [redacted:aws_access_key]'",
        '  gen_ai.input.messages=\'[{"role": "user", "parts": [{"type": "text", "content": "my key is '
        "[redacted:aws_access_key]\"}]}]'",
        "  output.value='[thinking] thinking it over\\ndeeper\\nanswer\\nsecond line'",
        '  gen_ai.output.messages=\'[{"role": "assistant", "parts": [{"type": "text", "content": '
        '"[thinking] thinking it over\\\\ndeeper\\\\nanswer\\\\nsecond line"}]}]\'',
        "  bbox.time.synthetic=True",
        "execute_tool noresult@18 <- invoke_agent agent@0 kind=1 7..7ms status=0",
        "  gen_ai.tool.name='noresult'",
        "  tool.name='noresult'",
        "  bbox.call.kind='tool'",
        '  gen_ai.tool.call.arguments=\'{"args": [], "fields": {}}\'',
        '  input.value=\'{"args": [], "fields": {}}\'',
        "  bbox.call.outcome='unknown'",
        "  bbox.time.synthetic=True",
        "chat gpt-x@17 <- invoke_agent agent@0 kind=3 6..7ms status=0",
        "  gen_ai.request.model='gpt-x'",
        "  gen_ai.response.model='gpt-x'",
        "  llm.model_name='gpt-x'",
        "  input.value='again'",
        '  gen_ai.input.messages=\'[{"role": "user", "parts": [{"type": "text", "content": "again"}]}]\'',
        "  output.value='last'",
        '  gen_ai.output.messages=\'[{"role": "assistant", "parts": [{"type": "text", "content": '
        '"last"}]}]\'',
        "  bbox.time.synthetic=True",
        "invoke_agent agent@0 <- - kind=1 0..7ms status=0",
        "  gen_ai.agent.name='agent'",
        "  bbox.semconv.version='1.37.0'",
        "  bbox.header.repo_sha='abcdef1'",
        "  bbox.header.model='gpt-x'",
        "  bbox.header.format='bbox/1'",
        "  input.value='my key is [redacted:aws_access_key]'",
        "  output.value='last'",
        "  bbox.time.synthetic=True",
    ]
    assert rows(report) == [
        ("kept", "user lines (as the next chat span's input)", 2, (7, 16)),
        ("dropped", "continuation lines (no span attribute; --content keeps text)", 2, (8, 14)),
        ("kept", "model responses as chat spans", 2, (9, 17)),
        ("kept", "continuation lines (in span content, --content)", 2, (10, 12)),
        ("kept", "calls as execute_tool spans", 3, (13, 15, 18)),
        ("kept", "secrets in span content (redacted)", 2, (0, 0)),
        ("synthesized", "line times (no ts=: the last time + 1 ms, bbox.time.synthetic)", 7, (0,)),
        ("kept", "spans written", 6, (0,)),
    ]


NO_ID = (
    session(
        "a: hi",
        "# model: other-model  ",
        "a: there model=",
        "u: x",
        "a: third",
        header="repo_sha: abc\nslug: sl\nclient: cl\ncwd: " + "d" * 1100 + "\n",
    ),
    False,
)


def test_a_header_without_an_id_and_model_switches() -> None:
    """No id: the trace's session id from the header's text; the agent from the first of the agent
    keys; a header value cut at 1024 characters; `# model:` switching the next response's model."""
    spans, report = spans_of(*NO_ID)
    assert render(spans) == [
        "chat@8 <- invoke_agent cl@0 kind=3 0..2ms status=0",
        "  bbox.time.synthetic=True",
        "chat other-model@12 <- invoke_agent cl@0 kind=3 4..4ms status=0",
        "  gen_ai.request.model='other-model'",
        "  gen_ai.response.model='other-model'",
        "  llm.model_name='other-model'",
        "  bbox.time.synthetic=True",
        "invoke_agent cl@0 <- - kind=1 0..4ms status=0",
        "  gen_ai.agent.name='cl'",
        "  bbox.semconv.version='1.37.0'",
        "  bbox.header.repo_sha='abc'",
        "  bbox.header.cwd='" + "d" * 1009 + "…[cut 76 chars]'",
        "  bbox.header.format='bbox/1'",
        "  bbox.time.synthetic=True",
    ]
    assert rows(report) == [
        ("synthesized", "session ids for the trace (the header has no id; from the header's text)", 1, (0,)),
        ("kept", "model responses as chat spans", 2, (8, 12)),
        ("dropped", "comment lines (# model: switches the model)", 1, (9,)),
        ("kept", "user lines (as the next chat span's input)", 1, (11,)),
        ("synthesized", "line times (no ts=: the last time + 1 ms, bbox.time.synthetic)", 5, (0,)),
        ("kept", "spans written", 3, (0,)),
    ]


# -- costs ---------------------------------------------------------------------------------


def test_a_response_without_a_stated_cost_has_the_estimate() -> None:
    header = "id: s\nrepo_sha: a\nmodel: claude-sonnet-4-5\n"
    spans, _ = spans_of(session("a: hi tokens_in=1000 tokens_out=100 tokens_cached=50", header=header))
    attributes = spans[0].attributes
    assert estimate("claude-sonnet-4-5", 1000, 100, 50) is not None
    assert attributes["bbox.cost.source"] == "estimated"
    assert attributes["gen_ai.usage.cost"] == float(estimate("claude-sonnet-4-5", 1000, 100, 50) or 0)
    assert attributes["gen_ai.usage.input_tokens"] == 1050
    # An unknown model, or none: no cost and no source.
    for model in ("nope-model", None):
        head = "id: s\nrepo_sha: a\n" + (f"model: {model}\n" if model else "")
        (chat, _root), _ = spans_of(session("a: hi tokens_in=1 tokens_out=1", header=head))
        assert "gen_ai.usage.cost" not in chat.attributes and "bbox.cost.source" not in chat.attributes


def test_the_summarys_cost_goes_on_the_root_when_end_states_none() -> None:
    spans, report = spans_of(session("a: hi", "# tokens=5 cost=0.3", "@end"))
    root = spans[-1]
    assert (root.attributes["bbox.session.cost_usd"], root.attributes["bbox.cost.source"]) == (0.3, "stated")
    assert ("dropped", "comment lines (the summary's cost goes on the root span)", 1, (8,)) in rows(report)
    (root,) = spans_of(session("# tokens=5", "@end"))[0][-1:]
    assert "bbox.session.cost_usd" not in root.attributes and "bbox.cost.source" not in root.attributes


def test_usage_attributes_in_both_vocabularies() -> None:
    from decimal import Decimal

    attributes: dict[str, Any] = {}
    usage_attributes(attributes, None, 3, 4, Decimal("0.25"))
    assert attributes == {
        "gen_ai.usage.cache_read.input_tokens": 3,
        "llm.token_count.prompt_details.cache_read": 3,
        "gen_ai.usage.output_tokens": 4,
        "llm.token_count.completion": 4,
        "llm.token_count.total": 4,
        "gen_ai.usage.cost": 0.25,
        "llm.cost.total": 0.25,
    }
    attributes = {}
    usage_attributes(attributes, 5, None, None, None)
    assert attributes == {
        "gen_ai.usage.input_tokens": 5,
        "llm.token_count.prompt": 5,
        "llm.token_count.total": 5,
    }
    attributes = {}
    usage_attributes(attributes, None, None, None, None)
    assert attributes == {}


# -- threads -----------------------------------------------------------------------------------


def test_a_thread_goes_under_the_open_task_call_not_a_later_call() -> None:
    spans, _ = spans_of(
        session(
            "t!:Task id=t1 → [running]", "t!:read id=r1 → [running]", "a: in sub tid=w1", "o: id=r1 → [ok]"
        )
    )
    by = {f"{s.name}@{s.line}": s for s in spans}
    assert by["invoke_agent w1@9"].parent_id == by["execute_tool Task@7"].span_id


def test_a_thread_goes_under_an_open_subagent_call_before_an_older_plain_call() -> None:
    spans, _ = spans_of(
        session("t!:read id=r1 → [running]", "x:explore id=x1 → [launched]", "a: w tid=w1", "o: id=r1 → [ok]")
    )
    by = {f"{s.name}@{s.line}": s for s in spans}
    assert by["invoke_agent w1@9"].parent_id == by["execute_tool explore@8"].span_id


def test_a_thread_goes_under_the_latest_open_task_call_else_the_latest_open_call() -> None:
    spans, _ = spans_of(session("t!:Task id=t1 → [running]", "t!:Task id=t2 → [running]", "a: w tid=w1"))
    by = {f"{s.name}@{s.line}": s for s in spans}
    assert by["invoke_agent w1@9"].parent_id == by["execute_tool Task@8"].span_id
    spans, _ = spans_of(session("t!:a id=a1 → [running]", "t!:b id=b1 → [running]", "a: w tid=w1"))
    by = {f"{s.name}@{s.line}": s for s in spans}
    assert by["invoke_agent w1@9"].parent_id == by["execute_tool b@8"].span_id


def test_calls_built_on_one_line_are_completed_by_their_ids() -> None:
    """Lines a converter builds share a line number: a completion closes the open call of its
    line with its id, and the other stays open for its own completion."""
    from bbox_lark.syntax import build

    head = next(iter(bbox_lark.iter_nodes(io.StringIO(session()))))
    running = build.result("running")
    nodes = [
        head,
        build.call("tool_start", "read", fields={"id": "c1"}, result=running),
        build.call("tool_start", "grep", fields={"id": "c2"}, result=running),
        build.observation(fields={"id": "c2"}, result=build.result("ok")),
        build.observation(fields={"id": "c1"}, result=build.result("error", message="no")),
    ]
    spans = [s for b in batches(iter(nodes), WriteContext(Fidelity())) for s in b.spans]
    assert [(s.name, s.status, s.attributes.get("bbox.call.outcome")) for s in spans] == [
        ("execute_tool grep", 1, "ok"),
        ("execute_tool read", 2, "error"),
        ("invoke_agent agent", 0, None),
    ]


def test_a_thread_goes_under_the_oldest_open_subagent_call_or_the_one_its_completion_names() -> None:
    spans, _ = spans_of(
        session(
            "t!:read id=r1 → [running]",
            "x:explore id=x1 → [launched]",
            "x:explore id=x2 → [launched]",
            "a: w tid=w1",
            "a: v tid=w2",
            "o: id=x2 session_id=w1 → [ok]",
        )
    )
    by = {f"{s.name}@{s.line}": s for s in spans}
    # w1 began under x1 (the oldest x: call), then x2's completion named it.
    assert by["invoke_agent w1@10"].parent_id == by["execute_tool explore@9"].span_id
    assert by["invoke_agent w2@11"].parent_id == by["execute_tool explore@9"].span_id
    assert by["invoke_agent explore@8"].parent_id == by["execute_tool explore@8"].span_id
    assert by["execute_tool explore@8"].attributes["bbox.call.completed"] is False


def test_a_thread_goes_under_an_open_call_of_another_thread_else_the_root() -> None:
    spans, _ = spans_of(
        session("a: main", "t!:read id=r1 tid=w0 → [running]", "a: w tid=w1", "o: id=r1 tid=w0 → [ok]")
    )
    by = {f"{s.name}@{s.line}": s for s in spans}
    assert by["invoke_agent w1@9"].parent_id == by["execute_tool read@8"].span_id
    assert by["execute_tool read@8"].parent_id == by["invoke_agent w0@8"].span_id
    assert by["invoke_agent w0@8"].parent_id == by["invoke_agent agent@0"].span_id
    # Its own open call is no launcher.
    spans, _ = spans_of(session("t!:read id=r1 tid=w0 → [running]", "a: w tid=w0"))
    by = {f"{s.name}@{s.line}": s for s in spans}
    assert by["invoke_agent w0@7"].parent_id == by["invoke_agent agent@0"].span_id


# -- times ---------------------------------------------------------------------------------------


def test_times_never_go_back_and_elapsed_marks_count_from_the_first_time() -> None:
    spans, report = spans_of(
        session(
            "# t=00:00:07",
            "a: x tid=w1 ts=2026-01-01T10:00:00Z",
            "a: y ts=2026-01-01T09:00:00Z",
            "a: z ts=bad",
            "# t=00:00:05",
            "a: q tid=w1",
        )
    )
    t0 = 1767261600 * 10**9
    times = {f"{s.name}@{s.line}": ((s.start_ns - t0) // 10**6, (s.end_ns - t0) // 10**6) for s in spans}
    assert times == {
        "chat gpt-x@8": (0, 5001),
        "chat gpt-x@9": (0, 1),
        "invoke_agent w1@8": (0, 5001),
        "invoke_agent agent@0": ((SYNTHETIC_BASE_NS + 1_000_000 - t0) // 10**6, 5001),
    }
    # The elapsed mark before any time is a synthetic time (2000-01-01 + 1 ms).
    assert spans[-1].start_ns == SYNTHETIC_BASE_NS + 1_000_000
    assert ("synthesized", "line times (no ts=: the last time + 1 ms, bbox.time.synthetic)", 3, (0,)) in rows(
        report
    )


def test_the_clock() -> None:
    clock = Clock()
    line = bbox_lark.parse(session("a: x", "a: y ts=2026-01-01T10:00:00Z", "# t=00:01:00", "# t=x"))
    first, timed, mark, bad = line.events
    assert clock.at(first) == (SYNTHETIC_BASE_NS + 1_000_000, True)
    assert clock.at(timed) == (1767261600 * 10**9, False)
    assert clock.at(mark) == (1767261660 * 10**9, False)
    assert clock.at(bad) == (1767261660 * 10**9 + 1_000_000, True)
    assert clock.synthetic_lines == 2


def test_a_session_with_no_time_starts_in_2000_and_says_so() -> None:
    spans, report = spans_of(session())
    (root,) = spans
    assert (root.start_ns, root.end_ns) == (SYNTHETIC_BASE_NS, SYNTHETIC_BASE_NS)
    assert "bbox.time.synthetic" not in root.attributes
    assert rows(report) == [
        ("synthesized", "span times (the session states no time; from 2000-01-01)", 1, (0,)),
        ("kept", "spans written", 1, (0,)),
    ]


def test_a_microsecond_time_is_kept_to_the_microsecond() -> None:
    spans, _ = spans_of(session("a: x ts=2026-01-01T10:00:00.123456Z"))
    assert spans[0].start_ns == 1767261600 * 10**9 + 123_456_000


# -- the parts --------------------------------------------------------------------------------------


def test_cut_marks_how_much_it_cut() -> None:
    assert cut("abcdef", 6) == "abcdef"
    assert cut("x" * 100, 20) == "x" * 5 + "…[cut 80 chars]"
    assert len(cut("x" * 100, 20)) == 20
    assert cut("x" * 30, 5) == "…[cut 25 chars]"


def test_trace_and_span_ids() -> None:
    import hashlib

    assert trace_id_for("s-1") == hashlib.sha256(b"bbox-lark/otlp trace\0s-1").digest()[:16]
    assert trace_id_for("\ud800") == hashlib.sha256(b"bbox-lark/otlp trace\0\xed\xa0\x80").digest()[:16]
    spans, _ = spans_of(session("a: x"))
    trace = trace_id_for("s-1")
    assert spans[0].span_id == hashlib.sha256(trace + b"chat\x001").digest()[:8]
    assert spans[1].span_id == hashlib.sha256(trace + b"agent\x000").digest()[:8]
    spans, _ = spans_of(session("t:read → [ok]", "x:plan → [launched]"))
    assert spans[0].span_id == hashlib.sha256(trace + b"tool\x001").digest()[:8]
    assert [s.name for s in spans][1:3] == ["invoke_agent plan", "execute_tool plan"]
    assert spans[1].span_id == hashlib.sha256(trace + b"subagent\x002").digest()[:8]
    assert spans[2].span_id == hashlib.sha256(trace + b"tool\x002").digest()[:8]
    spans, _ = spans_of(session("a: x", "a: y tid=w1"))
    thread = next(s for s in spans if s.name == "invoke_agent w1")
    assert thread.span_id == hashlib.sha256(trace + b"thread:w1\x002").digest()[:8]


def test_session_spans_are_the_batches_spans() -> None:
    text = session("u: go", "a: x tokens_in=1 tokens_out=1", "t:read → [ok]")
    report = Fidelity()
    spans = list(session_spans(iter(bbox_lark.iter_nodes(io.StringIO(text))), report))
    assert render(spans) == render(spans_of(text)[0])
    assert rows(report) == rows(spans_of(text)[1])[:-1]  # batches add "spans written"
    assert list(session_spans(iter([]), Fidelity())) == []
    with_content = list(
        session_spans(iter(bbox_lark.iter_nodes(io.StringIO(text))), Fidelity(), content=True)
    )
    assert render(with_content) == render(spans_of(text, content=True)[0])


def test_each_secret_in_span_content_is_counted() -> None:
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    spans, report = spans_of(session(f"u: {key} and {key[:-1]}Z", "a: ok"), content=True)
    assert "[redacted:aws_access_key] and [redacted:aws_access_key]" in str(
        spans[0].attributes["input.value"]
    )
    # Twice in the chat's input, twice in the root's first input.
    assert ("kept", "secrets in span content (redacted)", 4, (0, 0)) in rows(report)


def test_a_builder_made_directly_holds_its_content_flag() -> None:
    head = next(iter(bbox_lark.iter_nodes(io.StringIO(session()))))
    assert SpanBuilder(head, Fidelity()).content is False
    assert SpanBuilder(head, Fidelity(), content=True).content is True


# -- batches and encodings ----------------------------------------------------------------------------


def test_batches_hold_at_most_their_size_and_share_the_trace() -> None:
    text = session(*(f"t:read id=r{n} → [ok]" for n in range(5)))
    report = Fidelity()
    found = list(batches(bbox_lark.iter_nodes(io.StringIO(text)), WriteContext(report), size=2))
    assert [len(b.spans) for b in found] == [2, 2, 2]
    assert {b.trace_id for b in found} == {trace_id_for("s-1")} and {b.session_id for b in found} == {"s-1"}
    assert ("kept", "spans written", 6, (0,)) in rows(report)
    exact = list(
        batches(bbox_lark.iter_nodes(io.StringIO(session("t:a → [ok]"))), WriteContext(Fidelity()), 2)
    )
    assert [len(b.spans) for b in exact] == [2]
    assert list(batches(iter([]), WriteContext(Fidelity()))) == []


def test_json_is_the_protobuf_request_in_otlp_json() -> None:
    """OTLP/JSON read into the protobuf message (ids from hex) equals the protobuf request:
    every key, enum and value type (a 64-bit integer as a string, a double, a boolean)."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    text = session(
        "u: é ts=2026-01-01T10:00:00Z",
        "a: x tokens_in=1 tokens_out=2 # metrics cost_usd=0.5",
        "t:read → [err: broken]",
        "t!:open id=o1 → [running]",
        header="id: s-é\nrepo_sha: a\nmodel: m\nagent: agé\n",
    )
    spans, _ = spans_of(text, content=True)
    trace = trace_id_for("s-é")
    request = json.loads(to_json(spans, trace, "s-é"))
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    parsed = json_format.ParseDict(request, ExportTraceServiceRequest())
    expected = ExportTraceServiceRequest()
    expected.ParseFromString(to_protobuf(spans, trace, "s-é"))
    assert parsed == expected
    kinds = {
        kv.value.WhichOneof("value")
        for r in expected.resource_spans
        for s in r.scope_spans[0].spans
        for kv in s.attributes
    }
    assert kinds == {"string_value", "int_value", "double_value", "bool_value"}


def test_the_json_request_is_one_compact_line_as_written() -> None:
    from bbox_lark import __version__

    spans, _ = spans_of(session("a: é ts=2026-01-01T10:00:00Z", header="id: s\nrepo_sha: a\n"))
    root = spans[-1]
    line = to_json([root], trace_id_for("s"), "s")
    assert "\n" not in line and ", " not in line and '": ' not in line
    request = json.loads(line)
    assert line == json.dumps(request, ensure_ascii=False, separators=(",", ":"))
    (resource,) = request["resourceSpans"]
    assert resource["schemaUrl"] == "https://opentelemetry.io/schemas/1.37.0"
    (scope,) = resource["scopeSpans"]
    assert scope["scope"] == {"name": "bbox-lark", "version": __version__}
    assert scope["schemaUrl"] == "https://opentelemetry.io/schemas/1.37.0"
    (span,) = scope["spans"]
    assert span["status"] == {"code": 0} and "parentSpanId" not in span
    assert resource["resource"]["attributes"] == [
        {"key": "service.name", "value": {"stringValue": "bbox-lark"}},
        {"key": "telemetry.sdk.name", "value": {"stringValue": "bbox-lark"}},
        {"key": "telemetry.sdk.language", "value": {"stringValue": "python"}},
        {"key": "telemetry.sdk.version", "value": {"stringValue": __version__}},
        {"key": "bbox.session.id", "value": {"stringValue": "s"}},
    ]
    assert {"key": "bbox.time.synthetic", "value": {"boolValue": True}} not in span["attributes"]
    chat = json.loads(to_json(spans[:1], trace_id_for("s"), "s"))["resourceSpans"][0]["scopeSpans"][0][
        "spans"
    ][0]
    assert chat["parentSpanId"] == root.span_id.hex()
    non_ascii = to_json(
        spans_of(session("a: x", header="id: s\nrepo_sha: a\nagent: é\n"))[0], trace_id_for("s"), "s"
    )
    assert "invoke_agent é" in non_ascii


def test_write_gives_json_lines_or_protobuf_bytes() -> None:
    text = session(*(f"t:read id=r{n} → [ok]" for n in range(3)))
    result = convert(text, "bbox", to="otlp", otlp_encoding="json")
    assert len(result.text.splitlines()) == 1 and result.text.endswith("\n")
    protobuf = convert(text, "bbox", to="otlp")
    assert protobuf.text.encode("utf-8", "surrogateescape")[:1] == b"\n"  # field 1, length-delimited


def test_a_reopened_thread_is_no_child_of_its_own_open_call() -> None:
    spans, _ = spans_of(
        session(
            "t!:Task id=t1 → [running]",
            "t!:read id=r1 tid=w1 → [running]",
            "o: id=t1 → [ok]",
            "a: more tid=w1",
        )
    )
    threads = [s for s in spans if s.name == "invoke_agent w1"]
    by = {f"{s.name}@{s.line}": s for s in spans}
    assert [t.parent_id for t in threads] == [
        by["execute_tool Task@7"].span_id,
        by["invoke_agent agent@0"].span_id,
    ]


def test_model_switch_comments_keep_the_whole_name() -> None:
    spans, report = spans_of(session("# model: openai:gpt-4o extra", "a: x"))
    assert spans[0].name == "chat openai:gpt-4o"
    assert ("dropped", "comment lines (# model: switches the model)", 1, (7,)) in rows(report)


def test_the_estimate_without_cached_tokens() -> None:
    header = "id: s\nrepo_sha: a\nmodel: claude-sonnet-4-5\n"
    spans, _ = spans_of(session("a: hi tokens_in=1000 tokens_out=100", header=header))
    assert spans[0].attributes["gen_ai.usage.cost"] == float(
        estimate("claude-sonnet-4-5", 1000, 100, None) or 0
    )
    assert estimate("claude-sonnet-4-5", 1000, 100, None) != estimate("claude-sonnet-4-5", 999, 100, None)


def test_tool_arguments_in_content_keep_their_text() -> None:
    spans, _ = spans_of(session("t:read é.rs → [ok]"), content=True)
    assert spans[0].attributes["gen_ai.tool.call.arguments"] == '{"args": ["é.rs"], "fields": {}}'


def test_a_subagent_calls_own_agent_span_is_an_agent_span_with_real_times() -> None:
    spans, _ = spans_of(session("x:plan id=p1 ts=2026-01-01T10:00:00Z → [launched]", "o: id=p1 → [ok] done"))
    child = next(s for s in spans if s.name == "invoke_agent plan")
    assert child.attributes == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "plan",
        "openinference.span.kind": "AGENT",
        "session.id": "s-1",
    }


def test_an_error_message_on_a_span_is_cut_at_1024_characters() -> None:
    spans, _ = spans_of(session("t:run → [err: " + "e" * 2000 + "]"))
    assert len(spans[0].status_message) == 1024 and spans[0].status_message.endswith("…[cut 983 chars]")


def test_a_completion_naming_no_thread_ends_the_thread_its_call_launched() -> None:
    spans, _ = spans_of(
        session(
            "t!:Task id=t1 ts=2026-01-01T10:00:00Z → [running]",
            "a: w tid=w1",
            "o: id=t1 session_id=zzz ts=2026-01-01T10:00:05Z → [ok]",
            "a: later ts=2026-01-01T10:00:09Z",
        )
    )
    names = [s.name for s in spans]
    assert names.index("invoke_agent w1") < names.index("execute_tool Task")
    thread = spans[names.index("invoke_agent w1")]
    assert thread.end_ns == 1767261601 * 10**9 - 10**9 + 10**6  # its last line, 1 ms after the call


def test_a_thread_ended_by_another_call_and_a_thread_with_no_response() -> None:
    spans, _ = spans_of(
        session(
            "x:explore id=x1 → [launched]",
            "x:explore id=x2 → [launched]",
            "a: w tid=w1",
            "o: id=x2 session_id=w1 → [ok]",
            "o: id=x1 → [ok]",
        )
    )
    assert [s.attributes.get("bbox.call.outcome") for s in spans if s.name == "execute_tool explore"] == [
        "ok",
        "ok",
    ]
    spans, _ = spans_of(session("t!:Task id=t1 → [running]", "t:read tid=w1 → [ok]", "o: id=t1 → [ok]"))
    assert [s.name for s in spans] == [
        "execute_tool read",
        "invoke_agent w1",
        "execute_tool Task",
        "invoke_agent agent",
    ]


def test_a_cached_count_equal_to_the_prompt_is_part_of_it() -> None:
    spans, _ = spans_of(session("a: x # metrics prompt_tokens=300 cached_tokens=300"))
    assert spans[0].attributes["gen_ai.usage.input_tokens"] == 300


def test_output_tokens_alone_are_estimated() -> None:
    header = "id: s\nrepo_sha: a\nmodel: claude-sonnet-4-5\n"
    spans, _ = spans_of(session("a: x tokens_out=100", header=header))
    assert spans[0].attributes["bbox.cost.source"] == "estimated"
    assert spans[0].attributes["gen_ai.usage.cost"] == float(
        estimate("claude-sonnet-4-5", None, 100, None) or 0
    )


def test_messages_in_content_keep_their_text_and_a_response_without_input_has_none() -> None:
    spans, _ = spans_of(session("u: é", "a: one tokens_in=1", "a: two tokens_in=2"), content=True)
    first, second = spans[0], spans[1]
    assert '"content": "é"' in str(first.attributes["gen_ai.input.messages"])
    assert "input.value" not in second.attributes and "gen_ai.input.messages" not in second.attributes
    assert '"content": "two"' in str(second.attributes["gen_ai.output.messages"])


def test_only_an_elapsed_comment_moves_the_clock() -> None:
    # a tool call that happens to be named `elapsed`, with a `t=` field, is no time mark
    head = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
    document = bbox_lark.parse(head + "u: hi ts=2026-01-01T00:00:00Z\nt:elapsed t=00:00:10\n# t=00:00:20\n")
    clock = Clock()
    start, call, mark = (clock.at(event) for event in document.events)
    assert start[1] is False and call[1] is True
    assert mark == (start[0] + 20 * 10**9, False)


def test_otlp_is_written_only() -> None:
    from bbox_lark.convert import get_format

    otlp = get_format("otlp")
    assert otlp.read is None and otlp.sniff('{"resourceSpans": []}') == 0 and otlp.sniff("") == 0


def test_otlp_is_protobuf_unless_json_is_asked_for() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "examples" / "session.bbox").read_text(encoding="utf-8")
    default = convert(text, "bbox", to="otlp").text
    assert default == convert(text, "bbox", to="otlp", otlp_encoding="protobuf").text
    assert not default.startswith("{")
    assert convert(text, "bbox", to="otlp", otlp_encoding="json").text.startswith('{"resourceSpans":')


def test_each_batch_carries_its_trace_and_session() -> None:
    from bbox_lark.convert.otlp.encode import load_proto

    head = "---\nformat: bbox/1\nid: sess-42\nrepo_sha: 215db51\nrunner: local\n---\n"
    (batch,) = list(
        batches(bbox_lark.iter_nodes(io.StringIO(head + "u: hi\na: hello\n")), WriteContext(Fidelity()))
    )
    request = json.loads(batch.json())
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert all(span["traceId"] == batch.trace_id.hex() for span in spans)
    resource = request["resourceSpans"][0]["resource"]["attributes"]
    assert {"key": "bbox.session.id", "value": {"stringValue": "sess-42"}} in resource
    message = load_proto()[0].ExportTraceServiceRequest()
    message.ParseFromString(batch.protobuf())
    assert message.resource_spans[0].scope_spans[0].spans[0].trace_id == batch.trace_id
    attributes = {a.key: a.value.string_value for a in message.resource_spans[0].resource.attributes}
    assert attributes["bbox.session.id"] == "sess-42"


def test_protobuf_without_the_otel_extra_says_so_before_writing(monkeypatch: pytest.MonkeyPatch) -> None:
    from bbox_lark.convert import ConvertError
    from bbox_lark.convert.otlp import encode
    from bbox_lark.convert.otlp.encode import MISSING_EXTRA, MissingOtelExtra

    def missing() -> Any:
        raise MissingOtelExtra(MISSING_EXTRA)

    monkeypatch.setattr(encode, "load_proto", missing)
    head = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
    with pytest.raises(ConvertError) as raised:
        convert(head + "u: hi\n", "bbox", to="otlp")
    assert type(raised.value) is ConvertError and str(raised.value) == MISSING_EXTRA
    assert convert(head + "u: hi\n", "bbox", to="otlp", otlp_encoding="json").text.startswith("{")
