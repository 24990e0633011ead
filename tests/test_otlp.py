"""``convert --to otlp`` and ``send``, judged by a receiver that decodes what is posted with
``opentelemetry-proto`` (protobuf and JSON, gzip) and checks every span against the mapping
table (:mod:`otlp_support`); refusals, retries, unreachable endpoints and bad logs."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from otlp_support import Receiver, check_spans, decode_json, decode_protobuf, tree
from typer.testing import CliRunner

import bbox_lark
from bbox_lark.cli import app
from bbox_lark.convert import convert
from bbox_lark.convert.base import Fidelity, WriteContext
from bbox_lark.convert.otlp import BATCH_SPANS, MAX_ATTRIBUTE_CHARS, batches
from bbox_lark.convert.otlp.send import Poster, parse_headers, resolve_endpoint, resolve_headers, send_paths
from bbox_lark.syntax.source import encode

pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2", reason="the otel extra")

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo.bbox"
SUBAGENTS = REPO / "tests" / "fixtures" / "claude-code-subagents" / "sess-sub.jsonl"
runner = CliRunner()


def otlp(text: str | bytes, **options: Any) -> list[dict[str, Any]]:
    """The spans ``convert --to otlp`` writes for ``text`` (protobuf, or JSON lines)."""
    result = convert(text, "bbox", to="otlp", **options)
    if options.get("otlp_encoding") == "json":
        return decode_json(result.text)
    return decode_protobuf(encode(result.text))


def session(*body: str, header: str = "id: s-1\nrepo_sha: abcdef1\n") -> str:
    return "---\nformat: bbox/1\n" + header + "---\n" + "".join(line + "\n" for line in body)


LOG = session(
    "@start ts=2026-01-01T10:00:00Z",
    "u: fix the bug",
    "a: Looking now. tokens_in=9 tokens_out=3 tokens_cached=100",
    "t!:read id=c1 a.rs → [running] tokens_in=9 tokens_out=7 tokens_cached=100",
    "o: id=c1 → [ok] 12 lines",
    "t:test → [err: 2 failed]",
    "x:explore id=s1 → [launched]",
    "a: sub here tid=k1 tokens_in=1 tokens_out=2",
    "o: id=s1 → [ok] done",
    "t!:build id=c9 → [running]",
    "@end cost_usd=0.25",
    header="id: s-1\nrepo_sha: abcdef1\nagent: demo\nmodel: claude-sonnet-4-5\n",
)


# -- the mapping -----------------------------------------------------------------------------


def test_every_span_follows_the_mapping() -> None:
    spans = otlp(LOG)
    check_spans(spans)
    names = sorted(s["name"] for s in spans)
    assert names == sorted(
        [
            "invoke_agent demo",
            "chat claude-sonnet-4-5",
            "chat claude-sonnet-4-5",
            "execute_tool read",
            "execute_tool test",
            "execute_tool explore",
            "invoke_agent k1",
            "execute_tool build",
        ]
    )
    by_name = {s["name"]: s for s in spans}
    root = by_name["invoke_agent demo"]
    assert root["attributes"]["bbox.session.cost_usd"] == 0.25
    assert root["attributes"]["session.id"] == "s-1"
    assert by_name["execute_tool read"]["status"] == 1
    assert by_name["execute_tool test"]["status"] == 2
    assert by_name["execute_tool test"]["message"] == "[err: 2 failed]"
    never = by_name["execute_tool build"]
    assert never["status"] == 0 and never["attributes"]["bbox.call.completed"] is False
    assert never["end"] == root["end"]
    # The subagent thread is a child invoke_agent span under the x: call's tool span.
    assert by_name["invoke_agent k1"]["parent_id"] == by_name["execute_tool explore"]["span_id"]
    chat = next(
        s
        for s in spans
        if s["name"].startswith("chat") and s["attributes"].get("gen_ai.usage.input_tokens") == 109
    )
    assert chat["attributes"]["gen_ai.usage.output_tokens"] == 7  # the largest of the response
    assert chat["attributes"]["gen_ai.usage.cache_read.input_tokens"] == 100


def test_metrics_usage_and_stated_cost_go_on_the_chat_of_their_step() -> None:
    spans = otlp(
        session(
            "a: step=2 model=gpt-x",
            "t:read id=r1 → [ok]",
            "# metrics step=2 prompt_tokens=500 completion_tokens=20 cached_tokens=300 cost_usd=0.5"
            " cache_creation_input_tokens=40",
        )
    )
    check_spans(spans)
    chat = next(s for s in spans if s["name"] == "chat gpt-x")
    attributes = chat["attributes"]
    assert attributes["gen_ai.usage.input_tokens"] == 500  # ATIF: prompt includes cache
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == 300
    assert attributes["gen_ai.usage.cache_creation.input_tokens"] == 40
    assert attributes["gen_ai.usage.cost"] == 0.5 and attributes["bbox.cost.source"] == "stated"


def test_json_and_protobuf_carry_the_same_spans() -> None:
    assert otlp(LOG, otlp_encoding="json") == otlp(LOG)


def test_ids_are_deterministic_and_from_the_session_id() -> None:
    first, again = convert(LOG, "bbox", to="otlp").text, convert(LOG, "bbox", to="otlp").text
    assert first == again
    other = otlp(LOG.replace("id: s-1", "id: s-2"))
    assert {s["trace_id"] for s in other}.isdisjoint({s["trace_id"] for s in otlp(LOG)})


def test_content_only_when_asked_redacted_and_capped() -> None:
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    text = session("u: my key is " + key, "a: " + "long " * 5000, "t:read a.rs → [ok] fine")
    assert not any("input.value" in s["attributes"] for s in otlp(text))
    spans = otlp(text, content=True)
    check_spans(spans, content=True)
    values = [v for s in spans for v in s["attributes"].values() if isinstance(v, str)]
    assert not any(key in v for v in values)
    assert any("[redacted:aws_access_key]" in v for v in values)
    assert all(len(v) <= MAX_ATTRIBUTE_CHARS for v in values)
    assert any("[cut " in v for v in values)
    tool = next(s for s in spans if s["name"] == "execute_tool read")
    assert tool["attributes"]["gen_ai.tool.call.result"] == "fine"


def test_no_times_reused_ids_and_open_calls_give_a_valid_bounded_trace() -> None:
    body = ["u: go"]
    for _ in range(50):
        body += ["t!:read id=same → [running]", "a: more"]
    body += ["o: id=same → [ok]", "t:lost id=zz → [pending]", "# t=00:00:05", "@end"]
    spans = otlp(session(*body))
    check_spans(spans)
    root = next(s for s in spans if not s["parent_id"])
    assert root["attributes"]["bbox.time.synthetic"] is True
    assert all(s["start"] >= root["start"] and s["end"] <= root["end"] for s in spans)
    pending = [s for s in spans if s["attributes"].get("bbox.call.completed") is False]
    assert len(pending) == 50  # 49 reads never completed, and zz
    assert any(s["attributes"].get("bbox.call.pairing") == "ambiguous" for s in spans)


def test_times_come_from_ts_and_never_go_back() -> None:
    spans = otlp(
        session(
            "a: one ts=2026-01-01T10:00:05Z",
            "t:read ts=2026-01-01T10:00:01Z → [ok]",
            "a: two ts=2026-01-01T10:00:09Z",
        )
    )
    check_spans(spans)
    root = next(s for s in spans if not s["parent_id"])
    assert root["start"] == 1767261605 * 10**9
    assert root["end"] == 1767261609 * 10**9
    tool = next(s for s in spans if s["name"] == "execute_tool read")
    assert tool["start"] == root["start"]  # a time before the last one is taken as the last


def test_fidelity_report_names_what_spans_do_not_carry() -> None:
    result = convert(session("u: go", "  more", "# a note", "what is this", "@start"), "bbox", to="otlp")
    report = result.fidelity.render()
    for construct in ("continuation lines", "comment lines", "unknown lines", "lifecycle lines"):
        assert f"dropped {construct}" in report


def test_batches_stay_under_the_limit_and_memory_is_bounded() -> None:
    import tracemalloc

    def stream() -> Any:
        yield from bbox_lark.iter_nodes(
            io.StringIO(
                session(*(f"t:read id=r{n} → [ok] tokens_in={n} tokens_out=1" for n in range(20_000)))
            )
        )

    tracemalloc.start()
    sizes = [len(batch.spans) for batch in batches(stream(), WriteContext(Fidelity()))]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sum(sizes) == 40_001 and max(sizes) == BATCH_SPANS
    # Spans are handed out as they end: 6 MiB measured here, against 27 MiB when every batch
    # is kept (what a writer that collected the spans first would hold). 20k lines, not
    # 100k: the same margin in a fifth of the time under tracemalloc.
    assert peak < 16 * 2**20, peak


# -- send, against the local receiver -------------------------------------------------------


def test_send_posts_gzip_protobuf_with_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=a%20b,authorization=Bearer%20t0")
    with Receiver() as receiver:
        result = runner.invoke(
            app,
            ["send", str(DEMO), str(SUBAGENTS), "--endpoint", receiver.url + "/v1/traces", "-H", "x-team=c"],
        )
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert len(receiver.requests) == 2
    for request in receiver.requests:
        assert request.path == "/v1/traces"
        assert request.headers["content-type"] == "application/x-protobuf"
        assert request.headers["content-encoding"] == "gzip"
        assert request.headers["x-team"] == "c" and request.headers["authorization"] == "Bearer t0"
    check_spans(receiver.spans)
    expected = otlp(DEMO.read_bytes())
    demo = [s for s in receiver.spans if s["trace_id"] == expected[0]["trace_id"]]
    assert tree(demo) == tree(expected)


def test_claude_code_subagent_logs_are_child_agents_under_their_task() -> None:
    with Receiver() as receiver:
        result = send_paths([str(SUBAGENTS)], receiver.url + "/v1/traces", {})
    assert result.exit_code == 0
    spans = receiver.spans
    check_spans(spans)
    by_id = {s["span_id"]: s for s in spans}
    agents = {s["name"]: s for s in spans if s["name"] in ("invoke_agent a1", "invoke_agent b2")}
    assert set(agents) == {"invoke_agent a1", "invoke_agent b2"}
    for agent, call in (("invoke_agent a1", "toolu_task_a"), ("invoke_agent b2", "toolu_task_b")):
        assert by_id[agents[agent]["parent_id"]]["attributes"]["gen_ai.tool.call.id"] == call
    inner = [s for s in spans if s["parent_id"] == agents["invoke_agent a1"]["span_id"]]
    assert {s["name"].split()[0] for s in inner} == {"chat", "execute_tool"}


def test_batches_of_a_long_session_are_separate_requests(tmp_path: Path) -> None:
    log = tmp_path / "long.bbox"
    log.write_text(session(*(f"t:read id=r{n} → [ok]" for n in range(2500))), encoding="utf-8")
    with Receiver() as receiver:
        result = send_paths([str(log)], receiver.url + "/v1/traces", {})
    assert result.exit_code == 0
    assert [len(r.spans) for r in receiver.requests] == [1000, 1000, 501]
    check_spans(receiver.spans)


@pytest.mark.parametrize("status", [415, 422, 400])
def test_a_refusal_is_one_line_and_the_rest_is_still_sent(status: int) -> None:
    with Receiver() as receiver:
        receiver.play((status, "bad payload: spans refused"))
        result = runner.invoke(
            app, ["send", str(DEMO), str(SUBAGENTS), "--endpoint", receiver.url + "/v1/traces"]
        )
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    refused = [line for line in result.output.splitlines() if "refused" in line]
    assert len(refused) == 1
    assert f"HTTP {status}" in refused[0] and "bad payload: spans refused" in refused[0]
    assert len(receiver.requests) == 1  # the second file was sent


@pytest.mark.parametrize("status", [503, 429])
def test_busy_receivers_are_retried_with_back_off(status: int) -> None:
    waits: list[float] = []
    with Receiver() as receiver:
        receiver.play((status, "busy", {"Retry-After": "2"}), (status, "busy"))
        poster = Poster(receiver.url + "/v1/traces", {}, sleep=waits.append)
        assert poster.post(b"") is None
    assert waits == [2.0, 1.0]  # Retry-After, then the back-off (0.5 s doubled)
    with Receiver() as receiver:
        receiver.play(*[(status, "busy")] * 3)
        poster = Poster(receiver.url + "/v1/traces", {}, retries=2, sleep=waits.append)
        assert (
            poster.post(b"")
            == f"HTTP {status} {'Service Unavailable' if status == 503 else 'Too Many Requests'}: busy"
        )


def test_an_unreachable_endpoint_is_one_clear_line() -> None:
    with Receiver() as receiver:
        url = receiver.url + "/v1/traces"
    result = runner.invoke(app, ["send", str(DEMO), "--endpoint", url, "--retries", "0"])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert f"cannot reach {url}" in result.output


def test_usage_problems_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    for env in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(env, raising=False)
    assert runner.invoke(app, ["send", str(DEMO)]).exit_code == 2
    assert runner.invoke(app, ["send", str(DEMO), "--endpoint", "ftp://x"]).exit_code == 2
    assert (
        runner.invoke(app, ["send", str(DEMO), "--endpoint", "http://h/v1/traces", "-H", "novalue"]).exit_code
        == 2
    )
    assert runner.invoke(app, ["send", "nope.bbox", "--endpoint", "http://h/v1/traces"]).exit_code == 2


def test_the_missing_extra_is_a_one_line_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    from bbox_lark.convert.otlp import encode as encode_module

    def missing() -> None:
        raise encode_module.MissingOtelExtra(encode_module.MISSING_EXTRA)

    monkeypatch.setattr(encode_module, "load_proto", missing)
    result = runner.invoke(app, ["send", str(DEMO), "--endpoint", "http://127.0.0.1:9/v1/traces"])
    assert result.exit_code == 2 and "bbox-lark[otel]" in result.output
    result = runner.invoke(app, ["convert", str(DEMO), "--to", "otlp"])
    assert result.exit_code == 2 and "bbox-lark[otel]" in result.output
    assert (
        runner.invoke(app, ["convert", str(DEMO), "--to", "otlp", "--otlp-encoding", "json"]).exit_code == 0
    )


def test_endpoint_and_headers_from_the_environment() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}
    assert resolve_endpoint(None, env) == "http://collector:4318/v1/traces"
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = "http://other/traces"
    assert resolve_endpoint(None, env) == "http://other/traces"
    assert parse_headers("a=1, b = x%3Dy ") == {"a": "1", "b": "x=y"}
    assert resolve_headers(["a=2"], {"OTEL_EXPORTER_OTLP_HEADERS": "a=1,c=3"}) == {"a": "2", "c": "3"}


def test_the_langfuse_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/formats/otel.md, "Langfuse": the path and the Basic auth header `send` sends."""
    public, secret = "pk-lf-1234", "sk-lf-5678"
    token = base64.b64encode(f"{public}:{secret}".encode()).decode()
    with Receiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url + "/api/public/otel")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"Authorization=Basic {token}")
        result = runner.invoke(app, ["send", str(DEMO)])
    assert result.exit_code == 0, result.output
    (request,) = receiver.requests
    assert request.path == "/api/public/otel/v1/traces"
    assert request.headers["authorization"] == "Basic cGstbGYtMTIzNDpzay1sZi01Njc4"
    assert secret not in result.output


def test_the_mapping_page_shows_every_row_of_the_table() -> None:
    from bbox_lark.cli import docsgen
    from bbox_lark.convert.otlp import EXPORT_MAPPING, SEMCONV_VERSION

    page = (REPO / "docs" / "formats" / "otel.md").read_text(encoding="utf-8")
    for line in docsgen._mapping_table(EXPORT_MAPPING, "bbox", "otlp"):
        assert line in page, line
    assert SEMCONV_VERSION in page and f"{MAX_ATTRIBUTE_CHARS:,}" in page and f"{BATCH_SPANS:,}" in page
